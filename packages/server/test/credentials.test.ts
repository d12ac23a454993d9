import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Credential } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { SecretBox } from "../src/secrets/secret-box.js";
import { markingExtension } from "./support/extension-zips.js";
import { storedRows } from "./support/stored-rows.js";
import { startTestServer, type TestServer, tempDataDir, useTestServer } from "./support/test-server.js";

// Credentials from the attacker's side: a value written must never come back (in a
// record, a list, an error or the database file), another project's credential must be
// indistinguishable from none, and a wrong key must never start a server over secrets it
// cannot open.

const SECRET = "correct-horse-battery-staple-7f3a";
const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

/** The raw text of a request's answer, to prove what it does not contain. */
async function rawText(t: TestServer, method: string, path: string, body?: unknown, projectId?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${t.orgKey}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (projectId !== undefined) headers["x-service-project-id"] = projectId;
  const response = await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, text: await response.text() };
}

/** The stored values of credential `id`, opened with the data directory's own key file. */
async function storedValues(t: TestServer, id: string, key = readFileSync(join(t.dataDir, "secrets.key"), "utf8").trim()): Promise<Record<string, string>> {
  const [row] = await storedRows<{ values_sealed: string; project_id: string; domain: string }>(
    t,
    "SELECT values_sealed, project_id, domain FROM credentials WHERE id = ?",
    [id],
  );
  const box = new SecretBox(Buffer.from(key, "hex"));
  return JSON.parse(box.open(row?.values_sealed ?? "", `browser-service:credential:${row?.project_id}:${id}:${row?.domain}:values_sealed`)) as Record<
    string,
    string
  >;
}

describe("credentials", () => {
  const t = useTestServer();

  it("creates one: the record shows the keys of its values and never a value; the domain is normalized", async () => {
    const created = await rawText(t, "POST", "/credentials", {
      name: "shop-login",
      domain: "*.WWW.Shop.Example",
      values: { username: "agent@example.com", password: SECRET },
    });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(SECRET);
    const record = JSON.parse(created.text) as Credential;
    expect(record).toEqual({
      id: expect.stringMatching(/^cred_[a-z2-7]{24}$/),
      name: "shop-login",
      domain: "shop.example",
      sso_provider: null,
      has_values: true,
      value_keys: ["password", "username"],
      has_totp_secret: false,
      created_at: expect.any(String),
      updated_at: record.created_at,
    });
    for (const path of [`/credentials/${record.id}`, "/credentials/shop-login", "/credentials", "/credentials?query=SHOP"]) {
      const read = await rawText(t, "GET", path);
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(SECRET);
    }
    expect(await t.client().credentials.get("shop-login")).toEqual(record);
    // One leading `*.` and one `www.`, never down to a bare label.
    for (const [given, stored] of [
      ["www.com", "www.com"],
      ["*.www.com", "www.com"],
      ["WWW.www.example.com", "www.example.com"],
    ] as const) {
      expect((await t.client().credentials.create({ name: `domain-${given.replace(/\*/g, "star")}`, domain: given, values: { a: "b" } })).domain).toBe(stored);
    }
    expect(t.mismatches).toEqual([]);
  });

  it("lists page by page, by normalized domain and by a case-insensitive part of name or domain, or an exact id", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "credentials-list" });
    const scoped = t.client({ projectId: project.id });
    const made = [];
    for (const [name, domain] of [
      ["a-login", "a.example"],
      ["b-login", "b.example"],
      ["under_score", "c.example"],
    ] as const) {
      made.push(await scoped.credentials.create({ name, domain, values: { password: SECRET } }));
    }
    const all = [];
    for await (const each of scoped.credentials.listAll({ limit: 2 })) all.push(each.id);
    expect(all).toEqual(made.map((each) => each.id));
    expect((await scoped.credentials.list({ domain: "WWW.B.example" })).map((each) => each.name)).toEqual(["b-login"]);
    expect((await scoped.credentials.list({ query: "LOGIN" })).map((each) => each.name)).toEqual(["a-login", "b-login"]);
    // Matched as written: LIKE's wildcards are plain characters here.
    expect((await scoped.credentials.list({ query: "_" })).map((each) => each.name)).toEqual(["under_score"]);
    expect((await scoped.credentials.list({ query: "%" })).map((each) => each.name)).toEqual([]);
    expect((await scoped.credentials.list({ query: made[2]!.id })).map((each) => each.name)).toEqual(["under_score"]);
    await expect(scoped.credentials.list({ domain: "https://a.example" })).rejects.toMatchObject({ status: 400, code: "bad_request" });
  });

  it("refuses names shaped like ids, which a retried request by id could reach instead", async () => {
    const client = t.client();
    const real = await client.credentials.create({ name: "real", domain: "x.example", values: { password: "p" } });
    await expect(client.credentials.create({ name: real.id, domain: "y.example", values: { password: SECRET } })).rejects.toMatchObject({
      status: 400,
      code: "bad_request",
    });
    await expect(client.credentials.create({ name: "cred_aaaaaaaaaaaaaaaaaaaaaaaa", domain: "y.example", values: {} })).rejects.toMatchObject({ status: 400 });
    await expect(client.credentials.update("real", { name: "cred_bbbbbbbbbbbbbbbbbbbbbbbb" })).rejects.toMatchObject({ status: 400 });
  });

  it("takes the largest body the caps allow, however it is escaped", async () => {
    // 50 values of 4,096 characters, each written as a \u escape: about 1.2 MB of JSON.
    const value = "\\u00e9".repeat(4096);
    const values = Array.from({ length: 50 }, (_, i) => `"${`k${i}`.padEnd(64, "k")}":"${value}"`).join(",");
    const response = await fetch(`${t.url}/credentials`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
      body: `{"name":"largest","domain":"x.example","values":{${values}}}`,
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as Credential).value_keys).toHaveLength(50);
  });

  it("refuses duplicate names with 409 on create and on rename, changing nothing", async () => {
    const client = t.client();
    await client.credentials.create({ name: "taken", domain: "x.example", values: { password: "p" } });
    const other = await client.credentials.create({ name: "other", domain: "x.example", values: { password: "p" } });
    await expect(client.credentials.create({ name: "taken", domain: "y.example", values: { password: SECRET } })).rejects.toMatchObject({
      status: 409,
      code: "name_conflict",
    });
    await expect(client.credentials.update("other", { name: "taken", values: { extra: "changed" } })).rejects.toMatchObject({
      status: 409,
      code: "name_conflict",
    });
    expect(await client.credentials.get("other")).toEqual(other);
  });

  it("never puts a refused value or secret in an error", async () => {
    const long = `${SECRET}${"x".repeat(4097)}`;
    for (const body of [
      { name: "bad", domain: "x.example", values: { password: long } },
      { name: "bad", domain: "x.example", values: { password: SECRET, "bad key": SECRET } },
      { name: "bad", domain: "x.example", values: { password: SECRET }, totp_secret: `${SECRET}!` },
      { name: "bad", domain: "x.example", values: { password: SECRET }, totp_secret: `otpauth://hotp/x?secret=${TOTP_SECRET}` },
      { name: "bad", domain: "not a domain", values: { password: SECRET } },
    ]) {
      const answer = await rawText(t, "POST", "/credentials", body);
      expect(answer.status).toBe(400);
      expect(answer.text).not.toContain(SECRET);
      expect(answer.text).not.toContain(TOTP_SECRET);
    }
    const malformed = await rawText(t, "POST", "/credentials", { name: "bad", domain: "x.example", values: {}, totp_secret: "not base32!" });
    expect(JSON.parse(malformed.text)).toMatchObject({ code: "bad_request", details: [{ code: "invalid_totp_secret" }] });
    await expect(t.client().credentials.get("bad")).rejects.toMatchObject({ status: 404 });
  });

  it("gives TOTP codes: once in the answer that set the secret, then from /totp-code; 409 without a secret", async () => {
    const client = t.client();
    const created = await client.credentials.create({ name: "with-totp", domain: "totp.example", values: { username: "u" }, totp_secret: TOTP_SECRET });
    expect(created).toMatchObject({ has_totp_secret: true, totp_code: expect.stringMatching(/^\d{6}$/), totp_code_expires_at: expect.any(String) });
    expect(await client.credentials.get(created.id)).not.toHaveProperty("totp_code");
    const code = await client.credentials.totpCode("with-totp");
    expect(code.code).toMatch(/^\d{6}$/);
    expect(Date.parse(code.expires_at) % 30_000).toBe(0);
    const plain = await client.credentials.create({ name: "no-totp", domain: "totp.example", values: { username: "u" } });
    await expect(client.credentials.totpCode(plain.id)).rejects.toMatchObject({ status: 409, code: "totp_secret_missing" });
    const cleared = await client.credentials.update(created.id, { totp_secret: "", sso_provider: "google" });
    expect(cleared).toMatchObject({ has_totp_secret: false, sso_provider: "google" });
    expect(cleared).not.toHaveProperty("totp_code");
    await expect(client.credentials.totpCode(created.id)).rejects.toMatchObject({ status: 409 });
    const set = await client.credentials.update(created.id, { totp_secret: `otpauth://totp/x?secret=${TOTP_SECRET}&digits=8`, sso_provider: null });
    expect(set).toMatchObject({ has_totp_secret: true, sso_provider: null, totp_code: expect.stringMatching(/^\d{8}$/) });
    expect((await client.credentials.totpCode(created.id)).code).toMatch(/^\d{8}$/);
  });

  it("treats another project's credential exactly like a missing one, and deletes", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "credentials-other" });
    const theirs = await t.client({ projectId: project.id }).credentials.create({ name: "theirs", domain: "x.example", values: { password: SECRET } });
    const answer = async (method: string, ref: string, suffix = "") => {
      const read = await rawText(t, method, `/credentials/${ref}${suffix}`, method === "PATCH" ? { values: { password: "stolen" } } : undefined);
      return { status: read.status, body: read.text.replace(ref, "<ref>").replace(/"request_id":"[^"]*"/, "") };
    };
    for (const [method, suffix] of [
      ["GET", ""],
      ["PATCH", ""],
      ["DELETE", ""],
      ["GET", "/totp-code"],
    ] as const) {
      const missing = await answer(method, "cred_aaaaaaaaaaaaaaaaaaaaaaaa", suffix);
      expect(missing.status).toBe(404);
      expect(await answer(method, theirs.id, suffix)).toEqual(missing);
    }
    expect(await t.client({ projectId: project.id }).credentials.get(theirs.id)).toEqual(theirs);
    await expect(client.projects.delete(project.id)).rejects.toMatchObject({ status: 409, code: "project_not_empty" });
    await t.client({ projectId: project.id }).credentials.delete("theirs");
    await expect(t.client({ projectId: project.id }).credentials.get(theirs.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await client.projects.delete(project.id);
    expect(t.mismatches).toEqual([]);
  });
});

describe("stored credentials", () => {
  it("are encrypted at rest, merged and removed (removals first), all or nothing, and deleted for good", async () => {
    const t = await startTestServer();
    const client = t.client();
    const created = await client.credentials.create({ name: "merge-me", domain: "merge.example", values: { username: "u", password: "old", pin: "1234" } });
    const updated = await client.credentials.update("merge-me", {
      remove_value_keys: ["pin", "password", "absent"],
      values: { password: "new", otp_hint: "x" },
    });
    expect(updated.value_keys).toEqual(["otp_hint", "password", "username"]);
    expect(updated.updated_at >= created.updated_at).toBe(true);
    // Past 50 values together: refused, and nothing changes.
    const many = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, "v"]));
    await expect(client.credentials.update(created.id, { values: many, name: "renamed" })).rejects.toMatchObject({ status: 400, code: "bad_request" });
    expect(await client.credentials.get(created.id)).toEqual(updated);
    const emptied = await client.credentials.update(created.id, { remove_value_keys: ["otp_hint", "password", "username"] });
    expect(emptied).toMatchObject({ has_values: false, value_keys: [] });
    const kept = await client.credentials.create({ name: "kept", domain: "kept.example", values: { username: "u", password: SECRET } });
    await client.credentials.update("kept", { remove_value_keys: ["username", "password"], values: { password: "new", hint: "x" } });
    const gone = await client.credentials.create({ name: "gone", domain: "kept.example", values: { password: SECRET } });
    await client.credentials.delete(gone.id);
    await t.close({ keepData: true });
    try {
      expect(await storedValues(t, kept.id)).toEqual({ password: "new", hint: "x" });
      expect(await storedValues(t, created.id)).toEqual({});
      expect(await storedRows(t, "SELECT id FROM credentials WHERE id = ?", [gone.id])).toEqual([]);
      // Not in the database file in the clear, wherever SQLite put it.
      if (t.database === undefined) expect(readFileSync(join(t.dataDir, "browser-service.sqlite")).includes(SECRET)).toBe(false);
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe("what the server writes down", () => {
  it("never logs a value or a TOTP secret, at any level, whatever the request", async () => {
    const lines: string[] = [];
    const t = await startTestServer({ logger: { level: "trace", stream: { write: (line: string) => lines.push(line) } } });
    try {
      await rawText(t, "POST", "/credentials", { name: "logged", domain: "x.example", values: { password: SECRET }, totp_secret: TOTP_SECRET });
      await rawText(t, "PATCH", "/credentials/logged", { values: { password: `${SECRET}-2` }, totp_secret: `otpauth://totp/x?secret=${TOTP_SECRET}` });
      await rawText(t, "POST", "/credentials", { name: "bad", domain: "x.example", values: { password: SECRET }, totp_secret: `${TOTP_SECRET}!` });
      await rawText(t, "POST", "/credentials", { name: "bad", domain: "x.example", values: { password: `${SECRET}${"x".repeat(5000)}` } });
      await rawText(t, "GET", "/credentials/logged/totp-code");
      await t.client().extensions.upload({ file: markingExtension("logged"), name: "logged" });
      // A body cut short: the parser's complaint quotes none of it.
      const cut = await fetch(`${t.url}/credentials`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
        body: `{"name":"cut","domain":"x.example","values":{"password":"${SECRET}"`,
      });
      expect(cut.status).toBe(400);
      expect(await cut.text()).not.toContain(SECRET);
      expect(lines.length).toBeGreaterThan(5);
      const logged = lines.join("\n");
      expect(logged).not.toContain(SECRET);
      expect(logged).not.toContain(TOTP_SECRET);
      // Nor the API key a request carries (plugins log the headers they pass on).
      expect(logged).toContain("[redacted]");
      expect(logged).not.toContain(t.orgKey);
    } finally {
      await t.close();
    }
  });
});

describe("the secrets key", () => {
  it("keeps values readable across restarts, refuses another key without changing anything, and rotates all or nothing", async () => {
    const dataDir = tempDataDir();
    let t = await startTestServer({ dataDir });
    try {
      const created = await t.client().credentials.create({ name: "kept", domain: "x.example", values: { password: SECRET }, totp_secret: TOTP_SECRET });
      const first = readFileSync(join(dataDir, "secrets.key"), "utf8").trim();
      await t.close({ keepData: true });
      const sealedBefore = await storedRows<{ values_sealed: string; totp_sealed: string }>(t, "SELECT values_sealed, totp_sealed FROM credentials");
      expect(JSON.stringify(sealedBefore)).not.toContain(SECRET);

      // A wrong key: no start, and nothing stored or on disk changed.
      const wrong = randomBytes(32).toString("hex");
      await expect(startTestServer({ dataDir, secretsKey: wrong })).rejects.toMatchObject({ code: "secrets_key_mismatch" });
      await expect(startTestServer({ dataDir, secretsKey: wrong, previousSecretsKey: wrong })).rejects.toMatchObject({
        code: "secrets_key_mismatch",
      });
      expect(await storedRows(t, "SELECT values_sealed, totp_sealed FROM credentials")).toEqual(sealedBefore);
      expect(readFileSync(join(dataDir, "secrets.key"), "utf8").trim()).toBe(first);

      // The same key (from its file): everything opens.
      t = await startTestServer({ dataDir });
      const code = await t.client().credentials.totpCode("kept");
      expect(code.code).toMatch(/^\d{6}$/);
      await t.close({ keepData: true });

      // Rotation: the old key as previous, the new one given.
      const next = randomBytes(32).toString("hex");
      t = await startTestServer({ dataDir, secretsKey: next, previousSecretsKey: first });
      await t.close({ keepData: true });
      expect(await storedValues(t, created.id, next)).toEqual({ password: SECRET });
      const sealedAfter = await storedRows<{ values_sealed: string }>(t, "SELECT values_sealed FROM credentials");
      expect(sealedAfter[0]?.values_sealed).not.toBe(sealedBefore[0]?.values_sealed);
      await expect(startTestServer({ dataDir })).rejects.toMatchObject({ code: "secrets_key_mismatch" });
      t = await startTestServer({ dataDir, secretsKey: next });
      expect((await t.client().credentials.get("kept")).has_totp_secret).toBe(true);
      expect((await t.client().credentials.totpCode("kept")).code).toMatch(/^\d{6}$/);
      await t.close({ keepData: true });

      // A lost key file is not replaced by a new key: the start is refused, nothing written.
      rmSync(join(dataDir, "secrets.key"));
      await expect(startTestServer({ dataDir })).rejects.toThrow(/secrets.key is missing/);
      expect(existsSync(join(dataDir, "secrets.key"))).toBe(false);

      // A sealed value moved to another domain (or project) by someone with the database does not open there.
      await storedRows(t, "UPDATE credentials SET domain = 'evil.example' WHERE id = ?", [created.id]);
      t = await startTestServer({ dataDir, secretsKey: next });
      await expect(t.client().credentials.totpCode(created.id)).rejects.toMatchObject({ status: 500 });
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

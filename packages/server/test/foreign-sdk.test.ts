import { createHash } from "node:crypto";
import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import Kernel, { toFile } from "@onkernel/sdk";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markingExtension } from "./support/extension-zips.js";
import { useTestServer } from "./support/test-server.js";

// The hosted service's own SDK, unchanged, against this server: where the API document is
// silent, the server follows that SDK's shapes, so code written for it runs here too.

describe("the hosted service's SDK (@onkernel/sdk 0.84)", () => {
  const t = useTestServer();

  it("creates a browser with timeout_seconds, reads, lists and deletes it", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const created = await kernel.browsers.create({ timeout_seconds: 120 });
    expect(created.timeout_seconds).toBe(120);
    const id = (created as unknown as { id: string }).id;
    expect((await kernel.browsers.retrieve(id)).timeout_seconds).toBe(120);
    const listed = (await kernel.browsers.list()).getPaginatedItems() as unknown as { id: string; timeout_seconds: number }[];
    expect(listed.find((each) => each.id === id)?.timeout_seconds).toBe(120);
    await kernel.browsers.deleteByID(id);
    await expect(kernel.browsers.retrieve(id)).rejects.toMatchObject({ status: 404 });
  });

  it("creates a browser with telemetry, pages its events and follows its stream", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const created = await kernel.browsers.create({ telemetry: { browser: { console: { enabled: true } } } });
    const id = (created as unknown as { id: string }).id;
    expect(created.telemetry?.browser?.console?.enabled).toBe(true);
    const stream = await kernel.browsers.telemetry.stream(id, { replay: "all" });
    const playwright = await chromium.connectOverCDP((created as unknown as { cdp_ws_url: string }).cdp_ws_url);
    await playwright
      .contexts()[0]
      ?.pages()[0]
      ?.evaluate(() => console.log("seen by the SDK"));
    const seen: string[] = [];
    for await (const envelope of stream) {
      seen.push(envelope.event.type);
      if (envelope.event.type === "console_log") break;
    }
    expect(seen).toEqual(expect.arrayContaining(["cdp_connect", "console_log"]));
    await playwright.close();
    const types: string[] = [];
    for await (const envelope of kernel.browsers.telemetry.events(id, { limit: 2 } as never)) types.push(envelope.event.type);
    expect(types).toEqual(expect.arrayContaining(["cdp_connect", "console_log"]));
    expect((await kernel.browsers.telemetry.events(id, { category: ["console"] })).getPaginatedItems().map((each) => each.event.type)).toEqual(["console_log"]);
    await kernel.browsers.deleteByID(id);
  });

  it("gets the rule named when its timeout_seconds is out of range", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const refused = (await kernel.browsers.create({ timeout_seconds: 5 }).catch((error: unknown) => error)) as { status: number; error: unknown };
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ code: "bad_request" });
    expect(JSON.stringify(refused.error)).toContain("timeout_seconds");
  });

  it("uploads, lists, reads, downloads and deletes an extension", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const zip = markingExtension("foreign");
    const uploaded = await kernel.extensions.upload({ file: await toFile(zip, "foreign.zip"), name: "foreign" });
    expect(uploaded).toMatchObject({ name: "foreign", size_bytes: zip.length, checksum: createHash("sha256").update(zip).digest("hex") });
    const listed = (await kernel.extensions.list({ name: "foreign" })).getPaginatedItems();
    expect(listed).toEqual([uploaded]);
    expect(await kernel.extensions.get("foreign")).toEqual(uploaded);
    const download = await kernel.extensions.download(uploaded.id);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
    await kernel.extensions.delete("foreign");
    await expect(kernel.extensions.get(uploaded.id)).rejects.toMatchObject({ status: 404 });
  });

  it("creates, reads, updates, lists, gets TOTP codes of and deletes a credential", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const created = await kernel.credentials.create({
      name: "foreign-login",
      domain: "www.foreign.example",
      values: { username: "agent", password: "never-shown" },
      totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    });
    expect(created).toMatchObject({ domain: "foreign.example", has_values: true, value_keys: ["password", "username"], has_totp_secret: true });
    expect(created.totp_code).toMatch(/^\d{6}$/);
    expect(JSON.stringify(await kernel.credentials.retrieve("foreign-login"))).not.toContain("never-shown");
    const updated = await kernel.credentials.update(created.id, { remove_value_keys: ["username"], values: { email: "a@foreign.example" } });
    expect(updated.value_keys).toEqual(["email", "password"]);
    const listed = (await kernel.credentials.list({ domain: "foreign.example" })).getPaginatedItems();
    expect(listed.map((each) => each.id)).toEqual([created.id]);
    const code = await kernel.credentials.totpCode(created.id);
    expect(code.code).toMatch(/^\d{6}$/);
    expect(Date.parse(code.expires_at)).toBeGreaterThan(Date.now() - 1000);
    await kernel.credentials.delete("foreign-login");
    await expect(kernel.credentials.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("creates, renames, lists, downloads and deletes a profile, and starts a browser with it", async () => {
    const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
    const created = await kernel.profiles.create({ name: "foreign-profile" });
    expect(created).toMatchObject({ name: "foreign-profile", last_used_at: null });
    const renamed = await kernel.profiles.update(created.id, { name: "foreign-renamed" });
    expect(renamed.name).toBe("foreign-renamed");
    expect((await kernel.profiles.list({ name: "foreign-renamed" })).getPaginatedItems().map((each) => each.id)).toEqual([created.id]);
    const browser = await kernel.browsers.create({ profile: { name: "foreign-renamed", save_changes: true } });
    expect((browser as unknown as { profile: unknown }).profile).toEqual({ id: created.id, name: "foreign-renamed", save_changes: true });
    await kernel.browsers.deleteByID((browser as unknown as { id: string }).id);
    expect((await kernel.profiles.retrieve(created.id)).last_used_at).toEqual(expect.any(String));
    const download = await kernel.profiles.download(created.id);
    const archive = Buffer.from(await download.arrayBuffer());
    expect(archive.toString("utf8", 0, 28)).toBe("browser-service/cookies.json");
    await kernel.profiles.delete(created.id);
    await expect(kernel.profiles.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  describe("auth.connections", () => {
    let sites: LoginSites;
    beforeAll(async () => {
      sites = await startLoginSites();
    });
    afterAll(async () => {
      await sites?.close();
    });

    it("creates a connection, logs in through two steps it is asked for, follows the events and reads the timeline", async () => {
      const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
      const created = await kernel.auth.connections.create({
        domain: "localhost",
        profile_name: "foreign-auth",
        login_url: sites.url("localhost", "/two-step/login"),
        save_credentials: false,
      });
      expect(created).toMatchObject({ domain: "localhost", profile_name: "foreign-auth", status: "NEEDS_AUTH" });
      const started = await kernel.auth.connections.login(created.id);
      expect(started).toMatchObject({ id: created.id, flow_type: "LOGIN" });
      const answers: Record<string, string> = { identifier: sites.user.username, password: sites.user.password };
      const seen: { event: string; flow_status?: string; flow_step?: string }[] = [];
      const asked = new Set<string>();
      for await (const event of await kernel.auth.connections.follow(created.id)) {
        seen.push(event as (typeof seen)[number]);
        if (event.event !== "managed_auth_state" || event.flow_step !== "AWAITING_INPUT") continue;
        // That SDK knows no interaction_id: a pause is told apart by the fields it asks for.
        const fields = event.fields ?? [];
        const pause = fields.map((field) => field.id).join();
        if (asked.has(pause)) continue;
        asked.add(pause);
        await kernel.auth.connections.submit(created.id, { field_values: Object.fromEntries(fields.map((field) => [field.id, answers[field.type] ?? ""])) });
      }
      expect(asked.size).toBe(2);
      expect(seen.at(-1)).toMatchObject({ event: "managed_auth_state", flow_status: "SUCCESS", flow_step: "COMPLETED" });
      expect(await kernel.auth.connections.retrieve(created.id)).toMatchObject({ status: "AUTHENTICATED", flow_status: "SUCCESS" });
      const listed = (await kernel.auth.connections.list({ profile_name: "foreign-auth" })).getPaginatedItems();
      expect(listed.map((each) => each.id)).toEqual([created.id]);
      const timeline = (await kernel.auth.connections.timeline(created.id)).getPaginatedItems();
      expect(timeline[0]).toMatchObject({ type: "login", status: "SUCCESS" });
      await kernel.auth.connections.delete(created.id);
      await expect(kernel.auth.connections.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    });

    // Every other local site, through that SDK alone: a stored credential where the site
    // has one, the SDK's own submit for fields and choices, an emailed link opened.
    const SITES: { site: string; credential?: { domain: string; totp?: boolean; password?: string }; allowed?: string[]; ends: string; code?: string }[] = [
      { site: "password", credential: { domain: "localhost" }, ends: "SUCCESS" },
      { site: "password", credential: { domain: "localhost", password: "not-the-password" }, ends: "FAILED", code: "login_rejected" },
      { site: "totp", credential: { domain: "localhost", totp: true }, ends: "SUCCESS" },
      { site: "mfa", credential: { domain: "localhost" }, ends: "SUCCESS" },
      { site: "sso", credential: { domain: "127.0.0.1" }, allowed: ["127.0.0.1"], ends: "SUCCESS" },
      { site: "workspace", credential: { domain: "localhost" }, ends: "SUCCESS" },
      { site: "email-link", ends: "SUCCESS" },
      { site: "lookalike", credential: { domain: "localhost" }, ends: "FAILED", code: "domain_not_allowed" },
    ];
    it.each(SITES)("logs in on the $site site through its events, ending $ends", async ({ site, credential, allowed, ends, code }) => {
      const kernel = new Kernel({ apiKey: t.orgKey, baseURL: t.url, maxRetries: 0 });
      const name = `foreign-${site}${credential?.password === undefined ? "" : "-rejected"}`;
      if (credential !== undefined) {
        await kernel.credentials.create({
          name,
          domain: credential.domain,
          values: { username: sites.user.username, password: credential.password ?? sites.user.password },
          ...(credential.totp ? { totp_secret: sites.user.totpSecret } : {}),
        });
      }
      const host = site === "lookalike" ? "127.0.0.1" : "localhost";
      const created = await kernel.auth.connections.create({
        domain: "localhost",
        profile_name: name,
        login_url: sites.url(host, `/${site}/login`),
        ...(credential === undefined ? {} : { credential: { name } }),
        ...(allowed === undefined ? {} : { allowed_domains: allowed }),
      });
      await kernel.auth.connections.login(created.id);
      const answered = new Set<string>();
      let last: { flow_status?: string } = {};
      for await (const event of await kernel.auth.connections.follow(created.id)) {
        if (event.event !== "managed_auth_state") continue;
        last = event;
        const pause = JSON.stringify([event.flow_step, event.fields?.map((field) => field.id), event.choices?.map((choice) => choice.id)]);
        if (answered.has(pause)) continue;
        if (event.flow_step === "AWAITING_INPUT" && (event.fields ?? []).length > 0) {
          answered.add(pause);
          const values = { identifier: sites.user.username, password: sites.user.password, code: "424242" } as Record<string, string>;
          await kernel.auth.connections.submit(created.id, {
            field_values: Object.fromEntries((event.fields ?? []).map((field) => [field.id, values[field.type] ?? ""])),
          });
        } else if (event.flow_step === "AWAITING_INPUT" && (event.choices ?? []).length > 0) {
          answered.add(pause);
          const choices = event.choices ?? [];
          const chosen = choices.find((choice) => /text me/i.test(choice.label)) ?? choices[0];
          await kernel.auth.connections.submit(created.id, { selected_choice_id: chosen?.id ?? "" });
        } else if (event.flow_step === "AWAITING_EXTERNAL_ACTION") {
          answered.add(pause);
          await fetch(String(sites.pendingEmailLink()));
        }
      }
      expect(last).toMatchObject({ flow_status: ends, ...(code === undefined ? {} : { error_code: code }) });
      expect((await kernel.auth.connections.retrieve(created.id)).status).toBe(ends === "SUCCESS" ? "AUTHENTICATED" : "NEEDS_AUTH");
      await kernel.auth.connections.delete(created.id);
    });
  });
});

import { createHash } from "node:crypto";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PageServer } from "@browser-service/test-pages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markingExtension } from "./support/extension-zips.js";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive } from "./support/webmcp-driver.js";

// What a user uploaded, they can find again, fetch back byte for byte and remove: the
// extension records through the API, attacked with other projects' ids, tampered
// archives and races against browsers that use them.

let pages: PageServer;
const driven: DrivenBrowser[] = [];
beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/page", "<!doctype html><title>Plain page</title><p>hello</p>");
});
afterAll(async () => {
  for (const each of driven) await each.disconnect().catch(() => undefined);
  await pages?.close();
});

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("extension records", () => {
  const t = useTestServer();

  it("lists the project's extensions oldest first, page by page, and by exact name", async () => {
    const client = t.client();
    const before = (await client.extensions.list({ limit: 100 })).length;
    const made = [];
    for (const name of ["list-a", "list-b", "list-c"]) made.push(await client.extensions.upload({ file: markingExtension(name), name }));
    const all = [];
    for await (const each of client.extensions.listAll({ limit: 2 })) all.push(each);
    expect(all.slice(before).map((each) => each.id)).toEqual(made.map((each) => each.id));
    expect(all.slice(before)[1]).toEqual(made[1]);
    expect(await client.extensions.list({ name: "list-b" })).toEqual([made[1]]);
    expect(await client.extensions.list({ name: "LIST-B" })).toEqual([]);
    const page = await client.GET("/extensions", { params: { query: { offset: before, limit: 2 } } });
    expect(page.response.headers.get("x-has-more")).toBe("true");
    expect(page.response.headers.get("x-next-offset")).toBe(String(before + 2));
    await expect(client.extensions.list({ limit: 0 })).rejects.toMatchObject({ status: 400, code: "bad_request" });
    expect(t.mismatches).toEqual([]);
  });

  it("reads one by id or by name; another project's id or name is 404 exactly like a missing one", async () => {
    const client = t.client();
    const mine = await client.extensions.upload({ file: markingExtension("mine"), name: "mine" });
    expect(await client.extensions.get(mine.id)).toEqual(mine);
    expect(await client.extensions.get("mine")).toEqual(mine);
    const other = await client.projects.create({ name: "records-elsewhere" });
    const theirs = await t.client({ projectId: other.id }).extensions.upload({ file: markingExtension("theirs"), name: "theirs" });
    const answer = async (idOrName: string) => {
      const error = (await client.extensions.get(idOrName).catch((caught: unknown) => caught)) as { status: number; code: string; message: string };
      return { status: error.status, code: error.code, message: error.message.replace(JSON.stringify(idOrName), "<ref>") };
    };
    const missing = await answer("ext_aaaaaaaaaaaaaaaaaaaaaaaa");
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
    expect(await answer(theirs.id)).toEqual(missing);
    expect(await answer("theirs")).toEqual(missing);
    for (const path of ["/extensions/{id_or_name}", "/extensions/{id_or_name}/metadata"] as const) {
      await expect(client.GET(path, { params: { path: { id_or_name: theirs.id } }, parseAs: "text" })).rejects.toMatchObject({
        status: 404,
        code: "not_found",
      });
    }
    await expect(client.extensions.delete(theirs.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    // Theirs is untouched.
    expect(await t.client({ projectId: other.id }).extensions.get(theirs.id)).toEqual(theirs);
    await expect(client.extensions.get("x".repeat(256))).rejects.toMatchObject({ status: 400, code: "bad_request" });
    expect(t.mismatches).toEqual([]);
  });

  it("downloads the exact bytes uploaded, named after the extension", async () => {
    const client = t.client();
    const zip = markingExtension("download");
    const extension = await client.extensions.upload({ file: zip, name: "download-me" });
    const bytes = await client.extensions.download("download-me");
    expect(Buffer.from(bytes).equals(zip)).toBe(true);
    expect(sha256(bytes)).toBe(extension.checksum);
    const raw = await fetch(`${t.url}/extensions/${extension.id}`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    expect(raw.headers.get("content-type")).toBe("application/zip");
    expect(raw.headers.get("content-length")).toBe(String(zip.length));
    expect(raw.headers.get("content-disposition")).toBe('attachment; filename="download-me.zip"');
    await raw.arrayBuffer();
    const unnamed = await client.extensions.upload({ file: zip });
    const plain = await fetch(`${t.url}/extensions/${unnamed.id}`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    expect(plain.headers.get("content-disposition")).toBe(`attachment; filename="${unnamed.id}.zip"`);
    await plain.arrayBuffer();
    expect(t.mismatches).toEqual([]);
  });

  it("never sends an archive whose stored bytes no longer match its checksum", async () => {
    const client = t.client();
    const zip = markingExtension("tampered");
    const extension = await client.extensions.upload({ file: zip });
    const stored = join(t.dataDir, "extensions", `${extension.id}.zip`);
    const tampered = Buffer.from(zip);
    tampered[tampered.length - 30] = (tampered[tampered.length - 30] ?? 0) ^ 0xff;
    writeFileSync(stored, tampered);
    const raw = await fetch(`${t.url}/extensions/${extension.id}`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    expect(raw.status).toBe(500);
    const body = (await raw.json()) as { code: string };
    expect(body.code).toBe("internal_error");
    // Shorter bytes are no better.
    writeFileSync(stored, zip.subarray(0, zip.length - 1));
    await expect(client.extensions.download(extension.id)).rejects.toMatchObject({ status: 500 });
    writeFileSync(stored, zip);
    expect(Buffer.from(await client.extensions.download(extension.id)).equals(zip)).toBe(true);
    rmSync(stored);
    if (t.database === undefined) {
      // An archive gone from under its live record is the server's fault, not a missing extension.
      await expect(client.extensions.download(extension.id)).rejects.toMatchObject({ status: 500, code: "internal_error" });
    } else {
      // On PostgreSQL the file is only this node's copy: the archive is read again from the database.
      expect(Buffer.from(await client.extensions.download(extension.id)).equals(zip)).toBe(true);
    }
    expect((await client.extensions.get(extension.id)).id).toBe(extension.id);
  });

  it("refuses a name shaped like an extension id, which a retried delete by id could reach instead", async () => {
    const client = t.client();
    const real = await client.extensions.upload({ file: markingExtension("real") });
    await expect(client.extensions.upload({ file: markingExtension("twin"), name: real.id })).rejects.toMatchObject({ status: 400, code: "bad_request" });
    expect((await client.extensions.list({ limit: 100 })).filter((each) => each.name === real.id)).toEqual([]);
  });

  it("deletes one: gone from reads, its archive removed, its name free; a running browser keeps its copy", async () => {
    const client = t.client();
    const extension = await client.extensions.upload({ file: markingExtension("marker"), name: "doomed" });
    const browser = await client.browsers.create({ extensions: [{ name: "doomed" }] });
    const used = await client.extensions.get(extension.id);
    expect(used.last_used_at).toBe(browser.created_at);
    await client.extensions.delete("doomed");
    await expect(client.extensions.get(extension.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.extensions.download(extension.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.extensions.delete(extension.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    expect((await client.extensions.list({ limit: 100 })).some((each) => each.id === extension.id)).toBe(false);
    expect(existsSync(join(t.dataDir, "extensions", `${extension.id}.zip`))).toBe(false);
    // A new create cannot name it; the browser that loaded it still runs it and shows it.
    await expect(client.browsers.create({ extensions: [{ id: extension.id }] })).rejects.toMatchObject({ status: 404, code: "extension_not_found" });
    expect((await client.browsers.get(browser.id)).extensions).toEqual([{ id: extension.id, name: "doomed" }]);
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    const page = await driver.open(pages.url("/page"));
    expect(await page.evaluate(() => document.documentElement.dataset["markedBy"])).toBe("marker");
    // Its name is free again.
    const again = await client.extensions.upload({ file: markingExtension("again"), name: "doomed" });
    expect(again.id).not.toBe(extension.id);
    expect(await client.extensions.get("doomed")).toEqual(again);
    await client.browsers.delete(browser.id);
    expect(t.mismatches).toEqual([]);
  });

  it("lets a project whose extensions are all deleted be deleted", async () => {
    const admin = t.client();
    const project = await admin.projects.create({ name: "records-emptied" });
    const client = t.client({ projectId: project.id });
    const extension = await client.extensions.upload({ file: markingExtension("x") });
    await expect(admin.projects.delete(project.id)).rejects.toMatchObject({ status: 409, code: "project_not_empty" });
    await client.extensions.delete(extension.id);
    await admin.projects.delete(project.id);
    expect(readdirSync(join(t.dataDir, "extensions")).includes(`${extension.id}.zip`)).toBe(false);
  });
});

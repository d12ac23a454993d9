import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ArchiveUnpackError, UnpackBudgetError, unpackExtensionArchive } from "../src/extensions/archive-unpacking.js";
import { buildZip } from "./support/zip-writer.js";

// What a browser loads is what the archive holds, written where the server chose, readable
// by another account and writable by none: the unpacking of a stored extension archive.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-unpack-"));
  dirs.push(dir);
  return dir;
}

function archive(dir: string, zip: Buffer): string {
  const path = join(dir, "extension.zip");
  writeFileSync(path, zip);
  return path;
}

const mode = (path: string) => statSync(path).mode & 0o777;
const roomy = () => ({ bytes: 1024 * 1024, entries: 100 });

describe("unpackExtensionArchive", () => {
  it("writes every file and folder, folders 0755 and files 0644 whatever the umask", async () => {
    const dir = scratch();
    const zip = buildZip([
      { name: "manifest.json", data: '{"manifest_version":3,"name":"x","version":"1"}', deflate: true },
      { name: "js/", data: "" },
      { name: "js/deep/content.js", data: "console.log(1);", deflate: true },
      { name: "icon.png", data: "png" },
    ]);
    const dest = join(dir, "out", "ext");
    const umask = process.umask(0o077);
    try {
      await unpackExtensionArchive(archive(dir, zip), dest, roomy());
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(join(dest, "js/deep/content.js"), "utf8")).toBe("console.log(1);");
    expect(readFileSync(join(dest, "icon.png"), "utf8")).toBe("png");
    expect([mode(dest), mode(join(dest, "js")), mode(join(dest, "js/deep"))]).toEqual([0o755, 0o755, 0o755]);
    expect([mode(join(dest, "manifest.json")), mode(join(dest, "js/deep/content.js"))]).toEqual([0o644, 0o644]);
  });

  it("never writes into a folder that is already there", async () => {
    const dir = scratch();
    const dest = join(dir, "taken");
    mkdirSync(dest);
    await expect(unpackExtensionArchive(archive(dir, buildZip([{ name: "manifest.json", data: "{}" }])), dest, roomy())).rejects.toMatchObject({
      code: "EEXIST",
    });
  });

  it("refuses an archive that no longer passes the upload's checks, writing nothing", async () => {
    const dir = scratch();
    const dest = join(dir, "out");
    const escaping = buildZip([
      { name: "manifest.json", data: "{}" },
      { name: "../escaped.js", data: "pwned" },
    ]);
    await expect(unpackExtensionArchive(archive(dir, escaping), dest, roomy())).rejects.toBeInstanceOf(ArchiveUnpackError);
    expect(() => statSync(dest)).toThrow();
    expect(() => statSync(join(dir, "escaped.js"))).toThrow();
  });

  it("takes what it unpacks from the budget, and writes nothing of an archive past what is left", async () => {
    const dir = scratch();
    const zip = archive(
      dir,
      buildZip([
        { name: "manifest.json", data: "{}" },
        { name: "big.js", data: "x".repeat(1000), deflate: true },
      ]),
    );
    const budget = { bytes: 1500, entries: 3 };
    await unpackExtensionArchive(zip, join(dir, "first"), budget);
    expect(budget).toEqual({ bytes: 1500 - 1002, entries: 1 });
    // 1,002 more bytes do not fit in the 498 left: refused before anything is written.
    await expect(unpackExtensionArchive(zip, join(dir, "second"), budget)).rejects.toBeInstanceOf(UnpackBudgetError);
    expect(() => statSync(join(dir, "second"))).toThrow();
    await expect(unpackExtensionArchive(zip, join(dir, "third"), { bytes: 1_000_000, entries: 1 })).rejects.toBeInstanceOf(UnpackBudgetError);
  });
});

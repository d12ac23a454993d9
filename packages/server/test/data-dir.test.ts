import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createServer, DataDirNotOwnedError, runCli } from "../src/index.js";
import { dataDirLayout, liveOwner } from "../src/storage/data-dir.js";
import { newId } from "../src/storage/ids.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";
import { goodExtensionZip } from "./support/zip-writer.js";

// The data directory is the server's: private modes, a mark, and deletions limited to
// files the server names itself, in its own folders.

const dirs: string[] = [];
function scratchDataDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const modeOf = (path: string): number => statSync(path).mode & 0o777;
const MARKER = "browser-service-data-dir.txt";
const unusedLauncher = { launch: () => Promise.reject(new Error("no browsers in this test")) };

/** Files a user (or another program) put into the data directory and its folders. */
const UNRELATED = [
  "notes.txt",
  "uploads/notes.txt",
  "uploads/keep.zip",
  "uploads/nested/deep.zip",
  "extensions/readme.txt",
  "extensions/ext_not-an-id.zip",
  "extensions/copy.zip",
];

function writeUnrelated(dataDir: string): void {
  for (const file of UNRELATED) {
    mkdirSync(join(dataDir, file, ".."), { recursive: true });
    writeFileSync(join(dataDir, file), `unrelated ${file}`);
  }
}

function expectUnrelatedIntact(dataDir: string): void {
  for (const file of UNRELATED) expect(readFileSync(join(dataDir, file), "utf8"), file).toBe(`unrelated ${file}`);
}

function expectPrivate(dataDir: string): void {
  expect(modeOf(dataDir)).toBe(0o700);
  for (const dir of ["extensions", "uploads", "key-requests"]) expect(modeOf(join(dataDir, dir)), dir).toBe(0o700);
  expect(modeOf(join(dataDir, "browser-service.sqlite"))).toBe(0o600);
  expect(modeOf(join(dataDir, MARKER))).toBe(0o600);
  expect(modeOf(join(dataDir, "server.pid"))).toBe(0o600);
}

describe("data directory", () => {
  it("makes a new directory private and marks it; the database, the pid file and stored archives are 0600", async () => {
    const dataDir = join(scratchDataDir(), "new", "data");
    const t = await startTestServer({ dataDir, launcher: unusedLauncher });
    try {
      expectPrivate(dataDir);
      const extension = await t.client().extensions.upload({ file: goodExtensionZip() });
      expect(modeOf(join(dataDir, "extensions", `${extension.id}.zip`))).toBe(0o600);
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close({ keepData: true });
    }
  });

  it("keeps files it did not create, in the directory and its folders, across restarts; removes only its own leftovers", async () => {
    const dataDir = scratchDataDir();
    const first = await startTestServer({ dataDir, launcher: unusedLauncher });
    const kept = await first.client().extensions.upload({ file: goodExtensionZip(), name: "kept" });
    await first.close({ keepData: true });

    writeUnrelated(dataDir);
    // What a crash leaves: an archive no row points at and a half-received upload, both named as the server names them.
    const orphanArchive = join(dataDir, "extensions", `${newId("extension")}.zip`);
    const halfUpload = join(dataDir, "uploads", "6f1c2b1e-8a3d-4d2e-9b7a-0c5e4f3d2a19.zip");
    writeFileSync(orphanArchive, "orphan");
    writeFileSync(halfUpload, "half");

    for (let start = 0; start < 2; start++) {
      const t = await startTestServer({ dataDir, launcher: unusedLauncher });
      try {
        expectUnrelatedIntact(dataDir);
        expect(existsSync(orphanArchive)).toBe(false);
        expect(existsSync(halfUpload)).toBe(false);
        expect(existsSync(join(dataDir, "extensions", `${kept.id}.zip`))).toBe(true);
        expectPrivate(dataDir);
      } finally {
        await t.close({ keepData: true });
      }
    }
  });

  it("refuses a non-empty directory without its mark, touching nothing; the CLI says why in one line", async () => {
    const dataDir = scratchDataDir();
    writeFileSync(join(dataDir, "thesis.tex"), "mine");
    mkdirSync(join(dataDir, "uploads"));
    writeFileSync(join(dataDir, "uploads", "0b6f3d1e-2c4a-4f8e-9a7b-5d3c1e2f4a6b.zip"), "mine too");
    chmodSync(dataDir, 0o755);

    await expect(createServer({ dataDir, launcher: unusedLauncher })).rejects.toThrow(DataDirNotOwnedError);
    await expect(createServer({ dataDir, launcher: unusedLauncher })).rejects.toMatchObject({ code: "data_dir_not_owned" });
    expect(readdirSync(dataDir).sort()).toEqual(["thesis.tex", "uploads"]);
    expect(readdirSync(join(dataDir, "uploads"))).toEqual(["0b6f3d1e-2c4a-4f8e-9a7b-5d3c1e2f4a6b.zip"]);
    expect(modeOf(dataDir)).toBe(0o755);

    const err: string[] = [];
    const io = { stdout: () => undefined, stderr: (text: string) => void err.push(text) };
    expect(await runCli(["--data-dir", dataDir, "--port", "0"], io)).toBe(1);
    const printed = err.join("");
    expect(printed.trimEnd().split("\n")).toHaveLength(1);
    expect(printed).toContain(dataDir);
    expect(printed).toContain("(data_dir_not_owned)");
    expect(readdirSync(dataDir).sort()).toEqual(["thesis.tex", "uploads"]);
  });

  it("adopts a data directory of an older version (its database, no mark): marks it, makes it private, keeps its data and other files", async () => {
    const dataDir = scratchDataDir();
    const first = await startTestServer({ dataDir, launcher: unusedLauncher });
    const staging = await first.client().projects.create({ name: "staging" });
    const extension = await first.client().extensions.upload({ file: goodExtensionZip() });
    await first.close({ keepData: true });
    // As an older version left it: no mark, everything readable by everyone.
    unlinkSync(join(dataDir, MARKER));
    const archive = join(dataDir, "extensions", `${extension.id}.zip`);
    for (const path of [archive, join(dataDir, "browser-service.sqlite")]) chmodSync(path, 0o644);
    for (const path of [dataDir, join(dataDir, "extensions")]) chmodSync(path, 0o755);
    writeUnrelated(dataDir);

    const second = await createServer({ dataDir, launcher: unusedLauncher });
    try {
      expect(second.firstStart).toBeUndefined();
      expect(existsSync(join(dataDir, MARKER))).toBe(true);
      expectPrivate(dataDir);
      expect(modeOf(archive)).toBe(0o600);
      expectUnrelatedIntact(dataDir);
      const key = (await second.issueApiKey()).secret;
      const answer = await second.app.inject({ method: "GET", url: `/org/projects/${staging.id}`, headers: { authorization: `Bearer ${key}` } });
      expect(answer.json()).toMatchObject({ id: staging.id, name: "staging" });
    } finally {
      await second.close();
    }
  });
});

describe("the owner of a data directory", () => {
  it("is a running server, never a killed one that its parent has not reaped yet (a zombie)", async () => {
    const dir = tempDataDir();
    const layout = dataDirLayout(dir);
    // sh starts `sleep 0` in the background and becomes `sleep 30`, which never reaps it.
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const zombie = Number.parseInt(String((await once(parent.stdout, "data"))[0]), 10);
      await expect.poll(() => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]?.[0]).toBe("Z");
      writeFileSync(layout.ownerFile, `${zombie}\n`);
      expect(liveOwner(layout)).toBeUndefined();
      writeFileSync(layout.ownerFile, `${parent.pid}\n`);
      expect(liveOwner(layout)).toBe(parent.pid);
    } finally {
      parent.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkChromium, chromiumCheckLine } from "../src/browsers/chromium-check.js";
import { ChromiumLauncher } from "../src/index.js";
import { spawnServer } from "./support/child-server.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";

const scratch = mkdtempSync(join(tmpdir(), "chromium-check-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("POST /browsers without a usable Chromium", () => {
  it("is 503 browser_unavailable, as the spec documents, and holds no slot", async () => {
    const t = await startTestServer({ launcher: new ChromiumLauncher({ executablePath: "/nonexistent" }) });
    try {
      const client = t.client();
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await client.browsers.create({ name: "never" }).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ status: 503, code: "browser_unavailable" });
        // The cause names paths of the server's machine: it goes to the log, not to the client.
        expect((error as Error).message).not.toContain("/nonexistent");
      }
      expect(await client.browsers.list()).toEqual([]);
      expect(await client.limits.get()).toMatchObject({ concurrent_sessions_used: 0 });
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("checkChromium", () => {
  it("passes an executable that answers --version, with its first line", async () => {
    const path = join(scratch, "fake-chromium");
    writeFileSync(path, '#!/bin/sh\necho "Chromium 140.0.7339.80 built on Debian"\n');
    chmodSync(path, 0o755);
    const check = await checkChromium(path);
    expect(check).toEqual({ usable: true, executablePath: path, version: "Chromium 140.0.7339.80 built on Debian" });
    expect(chromiumCheckLine(check)).toBe(`Browsers can start: Chromium 140.0.7339.80 built on Debian at ${path}.`);
  });

  it("says what is wrong with a missing, non-executable or failing one", async () => {
    expect(await checkChromium("/nonexistent")).toMatchObject({ usable: false, problem: "does not exist" });
    expect(await checkChromium(scratch)).toMatchObject({ usable: false, problem: "is not a file" });
    const failing = join(scratch, "failing-chromium");
    writeFileSync(failing, "#!/bin/sh\necho 'libnss3.so: cannot open shared object file' >&2\nexit 127\n");
    chmodSync(failing, 0o755);
    expect(await checkChromium(failing)).toMatchObject({
      usable: false,
      problem: "failed on --version (exit code 127: libnss3.so: cannot open shared object file)",
    });
    // No execute bit at all: not runnable, even by root.
    const plain = join(scratch, "plain-file");
    writeFileSync(plain, "", { mode: 0o644 });
    expect(await checkChromium(plain)).toMatchObject({ usable: false, problem: "is not executable" });
  });
});

describe("the server's start", () => {
  it("says in one line that browsers cannot start, and why, then serves", async () => {
    const dataDir = tempDataDir();
    const bin = fileURLToPath(new URL("../bin/browser-service-server.mjs", import.meta.url));
    const child = spawn(process.execPath, [bin, "--data-dir", dataDir, "--port", "0", "--host", "127.0.0.1"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CHROMIUM_PATH: "/nonexistent", LOG_LEVEL: "warn" },
    });
    let stdout = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = once(child, "exit");
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout.includes("listening on")) resolve();
        });
        void exited.then(([code]) => reject(new Error(`exited (code ${code}) before listening: ${stderr}`)));
      });
      expect(stderr.split("\n").filter((line) => line.startsWith("Browsers"))).toEqual([
        "Browsers cannot start: /nonexistent does not exist. POST /browsers answers 503 browser_unavailable until Chromium is installed (Debian: apt-get install -y chromium) or CHROMIUM_PATH names a working one, and the server restarts.",
      ]);
    } finally {
      child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("names the Chromium it found when browsers can start, and says that they run sandboxed and what they reach", async () => {
    const dataDir = tempDataDir();
    const server = await spawnServer(dataDir);
    try {
      expect(server.stdout()).toMatch(/^Browsers can start: Chromium \S+.* at \S+\.$/m);
      // The tests' servers pass --allow-private-network (their pages are on 127.0.0.1), and it is said.
      expect(server.stdout()).toMatch(
        /^Browsers run sandboxed, each in namespaces and an account of its own \(bubblewrap [\d.]+\); they may reach loopback, private and link-local addresses and this host \(--allow-private-network\)\.$/m,
      );
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("warns on stderr, at every start, that --unsafe-no-sandbox runs browsers without their sandbox", async () => {
    const dataDir = tempDataDir();
    const server = await spawnServer(dataDir, ["--unsafe-no-sandbox"]);
    try {
      // Written before the listening line, but on another pipe: it may reach this process after it.
      await expect
        .poll(() => server.stderr())
        .toMatch(/^WARNING: browsers run WITHOUT a sandbox \(--unsafe-no-sandbox\): .* For a developer's own machine only\.$/m);
      expect(server.stdout()).not.toMatch(/sandboxed/);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@browser-service/client";
import { afterEach, describe, expect, it } from "vitest";
import { KeyIssueError } from "../src/app/issue-key.js";
import { answerKeyRequests, type KeyRequestLog } from "../src/app/key-requests.js";
import type { IssuedKey } from "../src/auth/api-key-store.js";
import { runCli } from "../src/index.js";
import { dataDirLayout, ensureDataDir } from "../src/storage/data-dir.js";
import { spawnServer } from "./support/child-server.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";

// `keys create` talks to a running server through files in key-requests/: one bad file
// there must not stop the server from answering the others.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function recordingLog(): KeyRequestLog & { lines: string[] } {
  const lines: string[] = [];
  const record = (_object: unknown, message?: string) => void lines.push(message ?? "");
  return { lines, warn: record, error: record } as unknown as KeyRequestLog & { lines: string[] };
}

describe("key requests", () => {
  it("skips and reports each malformed request file, answers it with malformed_request, and answers the others", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const layout = dataDirLayout(dataDir);
    ensureDataDir(layout);
    const at = (name: string) => join(layout.keyRequestsDir, name);
    writeFileSync(at("1-garbage.request.json"), "{not json");
    writeFileSync(at("2-project-number.request.json"), '{"project":5}');
    writeFileSync(at("3-array.request.json"), "[]");
    writeFileSync(at("4-good.request.json"), '{"project":"staging"}');
    writeFileSync(at("5-unknown.request.json"), '{"project":"nope"}');
    writeFileSync(at("6-org-wide.request.json"), "{}");

    const issued: (string | undefined)[] = [];
    const issue = async (project?: string): Promise<IssuedKey> => {
      if (project === "nope") throw new KeyIssueError("unknown_project", "No project nope.");
      issued.push(project);
      return { keyId: `key_${issued.length}`, orgId: "org_1", projectId: project ?? null, secret: `bsk_${issued.length}` };
    };
    const log = recordingLog();
    expect(await answerKeyRequests(layout, issue, log)).toBe(6);

    expect(issued).toEqual(["staging", undefined]);
    const answer = (name: string) => JSON.parse(readFileSync(at(`${name}.answer.json`), "utf8"));
    for (const name of ["1-garbage", "2-project-number", "3-array"]) expect(answer(name), name).toMatchObject({ ok: false, code: "malformed_request" });
    expect(answer("4-good")).toMatchObject({ ok: true, key: { projectId: "staging", secret: "bsk_1" } });
    expect(answer("5-unknown")).toMatchObject({ ok: false, code: "unknown_project" });
    expect(answer("6-org-wide")).toMatchObject({ ok: true, key: { projectId: null } });
    expect(readdirSync(layout.keyRequestsDir).filter((file) => file.endsWith(".request.json"))).toEqual([]);
    expect(log.lines).toHaveLength(3);
    for (const line of log.lines) expect(line).toMatch(/^skipped a malformed key request: /);
  });

  it("answers each request once when asked twice at once (two signals close together)", async () => {
    const started = await startTestServer();
    try {
      writeFileSync(join(started.dataDir, "key-requests", "one.request.json"), "{}");
      // Issuing a key awaits the database: without one run at a time, both runs would read the request.
      expect(await Promise.all([started.server.answerKeyRequests(), started.server.answerKeyRequests()])).toEqual([1, 0]);
      expect(JSON.parse(readFileSync(join(started.dataDir, "key-requests", "one.answer.json"), "utf8"))).toMatchObject({ ok: true });
    } finally {
      await started.close();
    }
  });

  it("a running server with a malformed file in key-requests/ still answers `keys create` at once", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await spawnServer(dataDir);
    try {
      // Several, so that whatever order the folder lists them in, some come before the CLI's request.
      for (const [i, text] of ["\u0000garbage", "", "null", '{"project":[]}', '{"project":"x","admin":true}'].entries()) {
        writeFileSync(join(dataDir, "key-requests", `left-by-someone-${i}.request.json`), text);
      }
      for (let round = 0; round < 2; round++) {
        const out: string[] = [];
        const err: string[] = [];
        const started = Date.now();
        expect(
          await runCli(["keys", "create", "--data-dir", dataDir], { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text) }),
          err.join(""),
        ).toBe(0);
        // The CLI waits up to 10 s for an answer; a skipped file must not cost that.
        expect(Date.now() - started).toBeLessThan(5_000);
        const key = out.join("").trim();
        expect((await createClient({ baseUrl: server.url, apiKey: key, projectId: null }).projects.list()).map((project) => project.name)).toEqual(["Default"]);
      }
      expect(readdirSync(join(dataDir, "key-requests")).filter((file) => file.endsWith(".request.json"))).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import type { DataDirLayout } from "../storage/data-dir.js";
import type { IssuedKey } from "./api-key-store.js";
import { KeyIssueError } from "./issue-key.js";

// A running server holds the database exclusively, so `keys create` cannot write to it.
// Instead it leaves a request file in the data directory and wakes the server with this
// signal; the server issues the key and writes the answer next to the request.

/** The signal that tells a server to answer pending key requests. */
export const KEY_REQUEST_SIGNAL = "SIGUSR2";

interface KeyRequest {
  project?: string;
}

type KeyAnswer = { ok: true; key: IssuedKey } | { ok: false; code: KeyIssueError["code"]; message: string };

// Written under a temporary name and renamed, so the reader never sees half a file.
function writeAtomically(path: string, content: string): void {
  const temp = `${path}.${randomUUID()}.tmp`;
  writeFileSync(temp, content, { mode: 0o600 });
  renameSync(temp, path);
}

/**
 * Server side: answers every pending request in the data directory with a new key (or
 * the reason none was issued). Returns how many were answered.
 */
export function answerKeyRequests(layout: DataDirLayout, issue: (project?: string) => IssuedKey): number {
  const requests = readdirSync(layout.keyRequestsDir).filter((file) => file.endsWith(".request.json"));
  for (const file of requests) {
    const path = join(layout.keyRequestsDir, file);
    const request = JSON.parse(readFileSync(path, "utf8")) as KeyRequest;
    let answer: KeyAnswer;
    try {
      answer = { ok: true, key: issue(request.project) };
    } catch (error) {
      if (!(error instanceof KeyIssueError)) throw error;
      answer = { ok: false, code: error.code, message: error.message };
    }
    writeAtomically(path.replace(/\.request\.json$/, ".answer.json"), JSON.stringify(answer));
    rmSync(path);
  }
  return requests.length;
}

/**
 * CLI side: asks the server with pid `serverPid` to issue a key and waits for its answer
 * (at most `timeoutMs`). The answer file, which holds the secret, is removed once read.
 */
export async function requestKeyFromServer(layout: DataDirLayout, serverPid: number, project: string | undefined, timeoutMs = 10_000): Promise<IssuedKey> {
  const id = randomUUID();
  const answerPath = join(layout.keyRequestsDir, `${id}.answer.json`);
  writeAtomically(join(layout.keyRequestsDir, `${id}.request.json`), JSON.stringify(project === undefined ? {} : { project }));
  process.kill(serverPid, KEY_REQUEST_SIGNAL);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let text: string;
    try {
      text = readFileSync(answerPath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await sleep(50);
      continue;
    }
    rmSync(answerPath);
    const answer = JSON.parse(text) as KeyAnswer;
    if (!answer.ok) throw new KeyIssueError(answer.code, answer.message);
    return answer.key;
  }
  rmSync(join(layout.keyRequestsDir, `${id}.request.json`), { force: true });
  throw new KeyIssueError("server_unresponsive", `The server with pid ${serverPid} did not answer within ${timeoutMs} ms; is it a browser-service-server of this version?`);
}

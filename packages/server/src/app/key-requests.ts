import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { IssuedKey } from "../auth/api-key-store.js";
import type { ServerLog } from "../observe/server-log.js";
import { type DataDirLayout, PRIVATE_FILE_MODE } from "../storage/data-dir.js";
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
  writeFileSync(temp, content, { mode: PRIVATE_FILE_MODE });
  renameSync(temp, path);
}

/** Where {@link answerKeyRequests} reports the requests it could not answer as asked. */
export type KeyRequestLog = Pick<ServerLog, "warn" | "error">;

/** The request in a request file's text, or why it is not one. */
function parseKeyRequest(text: string): KeyRequest | { malformed: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { malformed: `it is not JSON (${(error as Error).message})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { malformed: "it is not a JSON object" };
  const { project, ...rest } = value as Record<string, unknown>;
  if (project !== undefined && typeof project !== "string") return { malformed: '"project" is not a string' };
  if (Object.keys(rest).length > 0) return { malformed: `it has fields other than "project" (${Object.keys(rest).join(", ")})` };
  return project === undefined ? {} : { project };
}

/**
 * Server side: answers every pending request in the data directory with a new key (or
 * the reason none was issued), each on its own: a request file that is not a request
 * (not JSON, wrong fields) is logged, answered with `malformed_request` (so that a
 * `keys create` waiting for it fails at once rather than timing out) and removed; one
 * that cannot be read is logged and left; neither holds up the others. Returns how many
 * were answered.
 */
export async function answerKeyRequests(layout: DataDirLayout, issue: (project?: string) => Promise<IssuedKey>, log: KeyRequestLog): Promise<number> {
  const requests = readdirSync(layout.keyRequestsDir).filter((file) => file.endsWith(".request.json"));
  let answered = 0;
  for (const file of requests) {
    const path = join(layout.keyRequestsDir, file);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      // Gone: its `keys create` gave up waiting and removed it.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") log.error({ err: error, file: path }, "could not read a key request; skipped it");
      continue;
    }
    const request = parseKeyRequest(text);
    let answer: KeyAnswer;
    if ("malformed" in request) {
      log.warn({ file: path }, `skipped a malformed key request: ${request.malformed}`);
      answer = { ok: false, code: "malformed_request", message: `The key request ${file} is malformed: ${request.malformed}.` };
    } else {
      try {
        answer = { ok: true, key: await issue(request.project) };
      } catch (error) {
        if (!(error instanceof KeyIssueError)) log.error({ err: error, file: path }, "could not issue the key of a key request");
        answer =
          error instanceof KeyIssueError
            ? { ok: false, code: error.code, message: error.message }
            : { ok: false, code: "issue_failed", message: `The server could not issue the key: ${(error as Error).message}` };
      }
    }
    try {
      writeAtomically(path.replace(/\.request\.json$/, ".answer.json"), JSON.stringify(answer));
      rmSync(path, { force: true });
    } catch (error) {
      log.error({ err: error, file: path }, "could not answer a key request");
      continue;
    }
    answered++;
  }
  return answered;
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
  throw new KeyIssueError(
    "server_unresponsive",
    `The server with pid ${serverPid} did not answer within ${timeoutMs} ms; is it a browser-service-server of this version?`,
  );
}

/**
 * A client's DevTools command as `parseClientCommand` checked it. These four members
 * are all the router reads of a client's message: the browser receives a command written
 * anew from them, never the client's object.
 */
export interface ClientCommand {
  /** The client's own id, a non-negative safe integer: its answer carries it back. */
  id: number;
  /** The method, never empty. */
  method: string;
  /** The command's params, a JSON object; `undefined` when the command has none. */
  params: Record<string, unknown> | undefined;
  /** The session the command names; `undefined` when it names none (the client's own browser session). */
  sessionId: string | undefined;
}

/** A message that is not a command: why, in words for the client. */
export interface CommandProblem {
  ok: false;
  /** The sentence the client is answered with. */
  problem: string;
  /**
   * The message's `id` when it is a safe integer, negative ones included, so that the
   * answer can name the message it refuses; `undefined` when it has no such id.
   */
  id: number | undefined;
  /** The message's `sessionId` when it is a plain string, so that the answer goes back in that session. */
  sessionId?: string;
}

/** What `parseClientCommand` made of a message: a command, or why it is none. */
export type ParsedCommand = { ok: true; command: ClientCommand } | CommandProblem;

// What a session id the router echoes back may be: Chromium's are 32 hexadecimal digits.
const PLAIN_SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `value` when it is a session id the router may echo back in an answer (plain, at most 128 characters), else `undefined`. */
export function plainSessionId(value: unknown): string | undefined {
  return typeof value === "string" && PLAIN_SESSION_ID.test(value) ? value : undefined;
}

/** Whether `value` is a JSON object (neither null nor an array), whose members are yet to be checked. */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks that a client's message is a command: an object with a non-negative safe-integer
 * `id` and a non-empty string `method`, and, when present, an object `params` and a
 * string `sessionId`. The first rule broken is the problem reported; members other
 * than these four are left behind.
 */
export function parseClientCommand(message: unknown): ParsedCommand {
  if (!isJsonObject(message)) return { ok: false, problem: "A command must be a JSON object.", id: undefined };
  const { id, method, params, sessionId } = message;
  const safeId = typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
  const plainSession = plainSessionId(sessionId);
  const refuse = (problem: string): CommandProblem => ({ ok: false, problem, id: safeId, ...(plainSession === undefined ? {} : { sessionId: plainSession }) });
  if (safeId === undefined || safeId < 0) return refuse("A command needs a non-negative integer id.");
  if (typeof method !== "string" || method.length === 0) return refuse("A command needs a method name.");
  if (params !== undefined && !isJsonObject(params)) return refuse("params must be an object.");
  if (sessionId !== undefined && typeof sessionId !== "string") return refuse("sessionId must be a string.");
  return { ok: true, command: { id: safeId, method, params, sessionId } };
}

import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { fsyncDirectory, PRIVATE_FILE_MODE } from "../storage/data-dir.js";
import { SECRETS_KEY_BYTES } from "./secret-box.js";

/** A secrets key that cannot be used: malformed, unreadable, or readable by others. */
export class SecretsKeyError extends Error {
  /** Stable code of the failure. */
  readonly code = "secrets_key_invalid";

  constructor(message: string) {
    super(message);
    this.name = "SecretsKeyError";
  }
}

const KEY_TEXT = /^[0-9a-f]{64}$/i;

/** The key `text` writes (64 hex characters, a final newline allowed), or {@link SecretsKeyError} naming `source`. */
export function parseSecretsKey(text: string, source: string): Buffer {
  const trimmed = text.replace(/\r?\n$/, "");
  if (!KEY_TEXT.test(trimmed)) {
    throw new SecretsKeyError(
      `${source} is not a secrets key: it must be ${SECRETS_KEY_BYTES * 2} hex characters (${SECRETS_KEY_BYTES} random bytes), such as \`openssl rand -hex 32\` prints.`,
    );
  }
  return Buffer.from(trimmed, "hex");
}

/** The key in `file`, which must be a regular file only its owner can read. */
function readKeyFile(file: string): Buffer {
  // O_NOFOLLOW: a link planted in the data directory is not followed to another file.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new SecretsKeyError(`${file} is not a regular file; it cannot be the secrets key.`);
    if ((stat.mode & 0o077) !== 0) {
      throw new SecretsKeyError(`${file} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}); make it private with \`chmod 600 ${file}\`.`);
    }
    return parseSecretsKey(readFileSync(fd, "utf8"), file);
  } finally {
    closeSync(fd);
  }
}

/** Where the secrets key came from, and whether this start made it. */
export interface LoadedSecretsKey {
  key: Buffer;
  /** `--secrets-key`, or the file's path. */
  source: string;
  /** The file was created by this start. */
  created: boolean;
}

/**
 * The key that encrypts stored secrets: `configured` (64 hex characters, from
 * `--secrets-key` or its environment variable) when given, else the one in `file`. A
 * missing file is created (32 random bytes, mode 0600, never overwriting one that
 * appeared meanwhile) only when `mayCreate` (the database holds no secret yet): a lost
 * key is never replaced by a new one; an existing file is read, never rewritten.
 */
export function loadSecretsKey(file: string, configured: string | undefined, mayCreate = true): LoadedSecretsKey {
  if (configured !== undefined) return { key: parseSecretsKey(configured, "--secrets-key"), source: "--secrets-key", created: false };
  if (!mayCreate) {
    try {
      return { key: readKeyFile(file), source: file, created: false };
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      throw new SecretsKeyError(
        `${file} is missing, but the database holds secrets sealed with a key: restore the file from a backup, or give the key with --secrets-key. No key was written.`,
      );
    }
  }
  const key = randomBytes(SECRETS_KEY_BYTES);
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    return { key: readKeyFile(file), source: file, created: false };
  }
  try {
    writeSync(fd, `${key.toString("hex")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDirectory(dirname(file));
  return { key, source: file, created: true };
}

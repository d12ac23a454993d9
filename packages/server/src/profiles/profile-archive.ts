/**
 * A profile's saved state as one tar archive, the form it is stored and downloaded in:
 * `browser-service/cookies.json` first (the server's own entry: every cookie, as
 * DevTools' `Network.Cookie` objects), then the storage folders the browser's sandbox
 * wrote (a tar of `Default/...`, passed through unread: only the sandbox unpacks it).
 */

/** Name of the cookies entry. */
export const COOKIES_ENTRY = "browser-service/cookies.json";
const BLOCK = 512;

/** The state of a profile: its cookies and the tar of its storage folders. */
export interface ProfileState {
  cookies: unknown[];
  storage: Buffer;
}

/** A stored archive that does not start with the cookies entry the server writes. */
export class ProfileArchiveError extends Error {
  /** Stable code of the failure. */
  readonly code = "profile_archive_invalid";

  constructor(reason: string) {
    super(`The profile's saved state is not readable: ${reason}.`);
    this.name = "ProfileArchiveError";
  }
}

function writeOctal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(`${value.toString(8).padStart(length - 1, "0")}\0`, offset, length, "ascii");
}

/** A ustar header of a regular file `name` of `size` bytes (RFC-free, POSIX.1-1988 layout). */
function fileHeader(name: string, size: number, mtimeSeconds: number): Buffer {
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100, "utf8");
  writeOctal(header, 100, 8, 0o600);
  writeOctal(header, 108, 8, 0);
  writeOctal(header, 116, 8, 0);
  writeOctal(header, 124, 12, size);
  writeOctal(header, 136, 12, mtimeSeconds);
  header.fill(" ", 148, 156);
  header.write("0", 156, 1, "ascii");
  header.write("ustar\0", 257, 6, "ascii");
  header.write("00", 263, 2, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return header;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** The archive of `state`: the cookies entry, then the storage tar (or an empty archive's end). */
export function packProfileState(state: ProfileState, now = new Date()): Buffer {
  const cookies = Buffer.from(JSON.stringify(state.cookies), "utf8");
  const rest = state.storage.length > 0 ? state.storage : Buffer.alloc(2 * BLOCK);
  return Buffer.concat([fileHeader(COOKIES_ENTRY, cookies.length, Math.floor(now.getTime() / 1000)), cookies, padding(cookies.length), rest]);
}

/** The state an archive {@link packProfileState} made holds. */
export function unpackProfileState(archive: Buffer): ProfileState {
  if (archive.length < BLOCK) throw new ProfileArchiveError("it is shorter than one tar block");
  const header = archive.subarray(0, BLOCK);
  const name = header.toString("utf8", 0, 100).replace(/\0.*$/s, "");
  if (name !== COOKIES_ENTRY) throw new ProfileArchiveError(`its first entry is not ${COOKIES_ENTRY}`);
  const size = Number.parseInt(header.toString("ascii", 124, 136).replace(/\0.*$/s, "").trim(), 8);
  const start = BLOCK;
  const end = start + size;
  if (!Number.isSafeInteger(size) || size < 0 || end > archive.length) throw new ProfileArchiveError("its cookies entry has an impossible size");
  let cookies: unknown;
  try {
    cookies = JSON.parse(archive.toString("utf8", start, end));
  } catch {
    throw new ProfileArchiveError("its cookies entry is not JSON");
  }
  if (!Array.isArray(cookies)) throw new ProfileArchiveError("its cookies entry is not a list");
  return { cookies, storage: archive.subarray(end + padding(size).length) };
}

/** An empty archive: what a profile never saved downloads as. */
export const EMPTY_ARCHIVE = Buffer.alloc(2 * BLOCK);

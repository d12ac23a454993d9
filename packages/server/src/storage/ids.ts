import { randomBytes } from "node:crypto";

/** RFC 4648 base32 alphabet in lowercase: ids stay readable and case-insensitive-safe. */
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * `length` characters drawn uniformly from `alphabet`. Bytes that would bias the draw
 * (values past the largest multiple of the alphabet size) are discarded, so every
 * character is equally likely.
 */
function randomString(alphabet: string, length: number): string {
  const ceiling = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < ceiling) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** The resource kinds that get ids, with the prefix each id starts with. */
const ID_PREFIXES = {
  organization: "org_",
  project: "proj_",
  apiKey: "key_",
  extension: "ext_",
  browser: "brw_",
  credential: "cred_",
  profile: "prof_",
  authConnection: "conn_",
  loginFlow: "flow_",
  healthCheck: "chk_",
} as const;

/** A new id for `kind`: its prefix and 24 lowercase base32 characters (120 random bits). */
export function newId(kind: keyof typeof ID_PREFIXES): string {
  return ID_PREFIXES[kind] + randomString(BASE32, 24);
}

const ID_FORMATS = Object.fromEntries(Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}[a-z2-7]{24}$`)])) as Record<
  keyof typeof ID_PREFIXES,
  RegExp
>;

/** Whether `value` has the form {@link newId} gives ids of `kind` (so that files named after ids are told from others). */
export function isIdOf(kind: keyof typeof ID_PREFIXES, value: string): boolean {
  return ID_FORMATS[kind].test(value);
}

/** A new API key secret: `bsk_` and 32 base62 characters (about 190 random bits). */
export function newApiKeySecret(): string {
  return `bsk_${randomString(BASE62, 32)}`;
}

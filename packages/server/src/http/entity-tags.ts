import { createHash, type Hash } from "node:crypto";

/**
 * A strong entity tag built from a body as it is written: feed it the body's pieces in
 * order, then read {@link BodyTag.tag}. Equal bodies give equal tags and, short of a
 * SHA-256 collision, different bodies different ones, so the tag changes exactly when
 * something the body shows changes, whatever changed it.
 */
export class BodyTag {
  readonly #hash: Hash = createHash("sha256");

  /** Adds the next piece of the body. */
  update(piece: string): this {
    this.#hash.update(piece);
    return this;
  }

  /** The tag, quoted as `ETag` carries it (the spec's `EntityTag`: 43 characters of base64url). */
  get tag(): string {
    return `"${this.#hash.digest("base64url")}"`;
  }
}

// One entity tag of an `If-None-Match` list: optionally weak, then a quoted string of
// the characters RFC 9110 allows in one (no spaces, no double quotes).
const entityTag = /^(?:W\/)?("[\x21\x23-\x7E\x80-\xFF]*")$/;

/**
 * Whether an `If-None-Match` header names `current` (RFC 9110, section 13.1.2): `*`, or
 * a comma-separated list of entity tags compared weakly (a `W/` prefix is ignored). A
 * value that is not such a list matches nothing, so the caller gets the full answer.
 */
export function ifNoneMatchHits(header: string | undefined, current: string): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === "*") return true;
  let hit = false;
  for (const member of value.split(",")) {
    const trimmed = member.trim();
    if (trimmed === "") continue; // RFC 9110's list syntax allows empty elements
    const tag = entityTag.exec(trimmed)?.[1];
    if (tag === undefined) return false;
    if (tag === current) hit = true;
  }
  return hit;
}

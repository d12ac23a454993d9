import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A new browser access token: 32 random bytes (256 bits), base64url. */
export function newBrowserToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The SHA-256 (hex) under which a token is stored; the token itself never is. */
export function browserTokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Whether `token` is the one whose hash is `storedHash`, compared in constant time. */
export function browserTokenMatches(token: string, storedHash: string | null): boolean {
  if (storedHash === null) return false;
  const given = Buffer.from(browserTokenHash(token), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** What a live view token lets its holder do: watch and send input, or only watch. */
export type LiveViewAccess = "control" | "watch";

/**
 * The live view token of a browser for `access`: an HMAC-SHA256 of the access under the
 * browser's DevTools token. As strong as that token (256 bits), one-way (neither a live
 * view token nor the other kind yields it), and never stored: it is checked by deriving
 * it again, so it dies with the DevTools token, that is with the browser.
 */
export function liveViewToken(cdpToken: string, access: LiveViewAccess): string {
  return createHmac("sha256", cdpToken).update(`browser-service live view: ${access}`).digest("base64url");
}

/** Which access `given` grants on the browser whose DevTools token is `cdpToken`, compared in constant time; `undefined`: none. */
export function liveViewAccess(given: string, cdpToken: string | undefined): LiveViewAccess | undefined {
  if (cdpToken === undefined) return undefined;
  const digest = (token: string) => createHash("sha256").update(token).digest();
  const presented = digest(given);
  for (const access of ["control", "watch"] as const) {
    if (timingSafeEqual(presented, digest(liveViewToken(cdpToken, access)))) return access;
  }
  return undefined;
}

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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

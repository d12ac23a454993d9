import { Secret, TOTP, URI } from "otpauth";

/** What a TOTP code is computed from (RFC 6238). */
export interface TotpSettings {
  /** The secret in base32, upper case, without padding. */
  secret: string;
  algorithm: "SHA1" | "SHA256" | "SHA512";
  digits: number;
  /** Seconds each code is valid for. */
  period: number;
}

/** A `totp_secret` that is neither base32 nor an `otpauth://totp/` URI within the bounds. */
export class TotpSecretError extends Error {
  /** Stable code of the failure: the detail code of the 400. */
  readonly code = "invalid_totp_secret";

  constructor(reason: string, options?: ErrorOptions) {
    super(`totp_secret ${reason}.`, options);
    this.name = "TotpSecretError";
  }
}

const MIN_SECRET_BYTES = 10;
const MAX_SECRET_BYTES = 128;
const ALGORITHMS = new Set(["SHA1", "SHA256", "SHA512"]);

/** A base32 secret, checked and made canonical: spaces, dashes and padding dropped, upper case. */
function canonicalBase32(text: string): string {
  const canonical = text.replace(/[\s-]/g, "").toUpperCase().replace(/=+$/, "");
  if (!/^[A-Z2-7]+$/.test(canonical)) throw new TotpSecretError("is not base32 (letters A-Z and digits 2-7) nor an otpauth://totp/ URI");
  const bytes = Math.floor((canonical.length * 5) / 8);
  if (bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new TotpSecretError(`holds ${bytes} bytes; a secret is ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes (16 to 205 base32 characters)`);
  }
  return canonical;
}

/**
 * The settings a `totp_secret` gives: base32 (RFC 4648, spaces, dashes and padding
 * ignored) with SHA1, 6 digits and 30 s, or an `otpauth://totp/` URI with its own
 * algorithm (SHA1, SHA256, SHA512), digits (6 to 10) and period (1 to 300 s).
 */
export function parseTotpSecret(text: string): TotpSettings {
  if (!/^otpauth:/i.test(text.trim())) return { secret: canonicalBase32(text), algorithm: "SHA1", digits: 6, period: 30 };
  let parsed: ReturnType<typeof URI.parse>;
  try {
    parsed = URI.parse(text.trim());
  } catch (error) {
    throw new TotpSecretError("is not a valid otpauth:// URI", { cause: error });
  }
  if (!(parsed instanceof TOTP)) throw new TotpSecretError("is an otpauth://hotp/ URI; only time-based (otpauth://totp/) codes are supported");
  if (!ALGORITHMS.has(parsed.algorithm)) throw new TotpSecretError(`names the algorithm ${parsed.algorithm}; use SHA1, SHA256 or SHA512`);
  if (!Number.isInteger(parsed.digits) || parsed.digits < 6 || parsed.digits > 10)
    throw new TotpSecretError(`asks for ${parsed.digits} digits; 6 to 10 are supported`);
  if (!Number.isInteger(parsed.period) || parsed.period < 1 || parsed.period > 300)
    throw new TotpSecretError(`has a period of ${parsed.period} s; 1 to 300 are supported`);
  return {
    secret: canonicalBase32(parsed.secret.base32),
    algorithm: parsed.algorithm as TotpSettings["algorithm"],
    digits: parsed.digits,
    period: parsed.period,
  };
}

/** The code valid at `now` (milliseconds since the epoch), and when its period ends. */
export function totpCode(settings: TotpSettings, now = Date.now()): { code: string; expires_at: string } {
  const code = TOTP.generate({
    secret: Secret.fromBase32(settings.secret),
    algorithm: settings.algorithm,
    digits: settings.digits,
    period: settings.period,
    timestamp: now,
  });
  const periodMs = settings.period * 1000;
  return { code, expires_at: new Date((Math.floor(now / periodMs) + 1) * periodMs).toISOString() };
}

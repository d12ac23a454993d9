import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** Bytes of a secrets key: AES-256. */
export const SECRETS_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = "v1.";

/** A sealed value that the key does not open: another key sealed it, or it was changed. */
export class SecretOpenError extends Error {
  /** Stable code of the failure. */
  readonly code = "secret_not_opened";

  constructor() {
    super("A stored secret does not open with this key: another key sealed it, or its bytes were changed.");
    this.name = "SecretOpenError";
  }
}

/**
 * Authenticated encryption of stored secrets (AES-256-GCM, a random 96-bit IV per value).
 * Each value is bound to `context` (its row and column), so a sealed value copied into
 * another row or column does not open there.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== SECRETS_KEY_BYTES) throw new RangeError(`A secrets key is ${SECRETS_KEY_BYTES} bytes; received ${key.length}.`);
    this.#key = Buffer.from(key);
  }

  /** `text` sealed for `context`: `v1.` and base64url of {@link sealBytes}' bytes. */
  seal(text: string, context: string): string {
    return VERSION + this.sealBytes(Buffer.from(text, "utf8"), context).toString("base64url");
  }

  /** The text `sealed` holds, or {@link SecretOpenError} when this key and `context` do not open it. */
  open(sealed: string, context: string): string {
    if (!sealed.startsWith(VERSION)) throw new SecretOpenError();
    return this.openBytes(Buffer.from(sealed.slice(VERSION.length), "base64url"), context).toString("utf8");
  }

  /** `plain` sealed for `context`: IV, tag and ciphertext. */
  sealBytes(plain: Uint8Array, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** The bytes `sealed` holds, or {@link SecretOpenError} when this key and `context` do not open them. */
  openBytes(sealed: Uint8Array, context: string): Buffer {
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new SecretOpenError();
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const decipher = createDecipheriv("aes-256-gcm", this.#key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretOpenError();
    }
  }

  /** Whether this key opens `sealed` for `context`. */
  opens(sealed: Uint8Array, context: string): boolean {
    try {
      this.openBytes(sealed, context);
      return true;
    } catch (error) {
      if (error instanceof SecretOpenError) return false;
      throw error;
    }
  }
}

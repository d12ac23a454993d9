import { SecretBox, SecretOpenError } from "./secret-box.js";

const CHECK_CONTEXT = "browser-service:secrets-check";
const CHECK_TEXT = "browser-service secrets key check";

/**
 * What a credential's sealed column is bound to: its project, row, domain (which never
 * changes) and column, so a sealed value moved to another row, project or domain does
 * not open there.
 */
export const credentialContext = (field: { project_id: string; id: string; domain: string }, column: "values_sealed" | "totp_sealed"): string =>
  `browser-service:credential:${field.project_id}:${field.id}:${field.domain}:${column}`;

/** What a profile's saved state is bound to: its project and profile. */
export const profileContext = (projectId: string, id: string): string => `browser-service:profile:${projectId}:${id}:snapshot`;

/** The stored check value: one value sealed with the current key. */
export interface KeyCheckStore {
  /** The stored check value, or `undefined` before the first start that wrote one. */
  keyCheck(): Promise<string | undefined>;
  /** Stores the first check value; one stored meanwhile (another node's) is kept, and returned. */
  initKeyCheck(sealed: string): Promise<string>;
  /** Replaces the check value, once every secret is sealed with the key it was sealed with. */
  setKeyCheck(sealed: string): Promise<void>;
}

/**
 * Seals again, with the new key, what the previous key sealed; what the new key opens
 * already is returned as it is, so a rotation cut short by a crash is finished by the next.
 */
export interface Resealer {
  text(sealed: string, context: string): string;
  bytes(sealed: Buffer, context: string): Buffer;
}

/** The secrets key given is not the one that sealed the database's secrets: the server does not start. */
export class SecretsKeyMismatchError extends Error {
  /** Stable code of the failure. */
  readonly code = "secrets_key_mismatch";

  constructor(source: string) {
    super(
      `The secrets key from ${source} does not open the secrets this database holds: another key sealed them. ` +
        "Start with that key (--secrets-key or BROWSER_SERVICE_SECRETS_KEY, or the secrets.key of the data directory that first stored them); " +
        "every node sharing a database needs the same one. To change keys, give the old one as --secrets-key-previous. No stored secret was changed.",
    );
    this.name = "SecretsKeyMismatchError";
  }
}

/** Whether `box` opens the check value `sealed`. */
function opensCheck(box: SecretBox, sealed: string): boolean {
  try {
    return box.open(sealed, CHECK_CONTEXT) === CHECK_TEXT;
  } catch (error) {
    if (error instanceof SecretOpenError) return false;
    throw error;
  }
}

/** What opening the vault did: how many values a key rotation sealed again (0 without one). */
export interface VaultOpening {
  vault: SecretsVault;
  resealed: number;
  /** The previous key was given but nothing needed it: the rotation is done, the flag can go. */
  previousUnused: boolean;
}

/**
 * Seals and opens what the server stores secretly (credentials' values, profiles' saved
 * state) with its key, each value bound to a context naming its owner. Opened at start
 * by {@link SecretsVault.open}, which refuses a key that is not the one that sealed what
 * is stored.
 */
export class SecretsVault {
  readonly #box: SecretBox;

  private constructor(box: SecretBox) {
    this.#box = box;
  }

  /**
   * The vault of `key`, after checking it against the stored check value: the first start
   * stores one; a key that does not open it is refused ({@link SecretsKeyMismatchError}),
   * unless `previous` opens it: then `resealAll` seals every stored secret again with
   * `key`, and only after that is the check value replaced.
   */
  static async open(
    checks: KeyCheckStore,
    key: Buffer,
    options: { previous?: Buffer | undefined; source: string; resealAll: (resealer: Resealer) => Promise<number> },
  ): Promise<VaultOpening> {
    const box = new SecretBox(key);
    const vault = new SecretsVault(box);
    const stored = (await checks.keyCheck()) ?? (await checks.initKeyCheck(box.seal(CHECK_TEXT, CHECK_CONTEXT)));
    if (opensCheck(box, stored)) return { vault, resealed: 0, previousUnused: options.previous !== undefined };
    if (options.previous === undefined) throw new SecretsKeyMismatchError(options.source);
    const old = new SecretBox(options.previous);
    if (!opensCheck(old, stored)) throw new SecretsKeyMismatchError(`${options.source} and --secrets-key-previous`);
    const resealer: Resealer = {
      bytes: (sealed, context) => (box.opens(sealed, context) ? sealed : box.sealBytes(old.openBytes(sealed, context), context)),
      text: (sealed, context) => {
        try {
          box.open(sealed, context);
          return sealed;
        } catch (error) {
          if (!(error instanceof SecretOpenError)) throw error;
          return box.seal(old.open(sealed, context), context);
        }
      },
    };
    const resealed = await options.resealAll(resealer);
    await checks.setKeyCheck(box.seal(CHECK_TEXT, CHECK_CONTEXT));
    return { vault, resealed, previousUnused: false };
  }

  /** `text` sealed for `context`. */
  sealText(text: string, context: string): string {
    return this.#box.seal(text, context);
  }

  /** The text `sealed` holds for `context`. */
  openText(sealed: string, context: string): string {
    return this.#box.open(sealed, context);
  }

  /** `bytes` sealed for `context`. */
  sealBytes(bytes: Uint8Array, context: string): Buffer {
    return this.#box.sealBytes(bytes, context);
  }

  /** The bytes `sealed` holds for `context`. */
  openBytes(sealed: Uint8Array, context: string): Buffer {
    return this.#box.openBytes(sealed, context);
  }
}

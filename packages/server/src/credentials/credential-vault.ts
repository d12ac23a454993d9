import { SecretBox, SecretOpenError } from "../secrets/secret-box.js";
import type { CredentialRow, CredentialStore, SealedField } from "./credential-store.js";
import type { TotpSettings } from "./totp.js";

const CHECK_CONTEXT = "browser-service:secrets-check";
const CHECK_TEXT = "browser-service secrets key check";

const contextOf = (id: string, column: SealedField["column"]) => `browser-service:credential:${id}:${column}`;

/** The secrets key given is not the one that sealed the database's secrets: the server does not start. */
export class SecretsKeyMismatchError extends Error {
  /** Stable code of the failure. */
  readonly code = "secrets_key_mismatch";

  constructor(source: string) {
    super(
      `The secrets key from ${source} does not open the secrets this database holds: another key sealed them. ` +
        "Start with that key (--secrets-key or BROWSER_SERVICE_SECRETS_KEY, or the secrets.key of the data directory that first stored them); " +
        "every node sharing a database needs the same one. To change keys, give the old one as --secrets-key-previous. Nothing was changed.",
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
  vault: CredentialVault;
  resealed: number;
  /** The previous key was given but nothing needed it: the rotation is done, the flag can go. */
  previousUnused: boolean;
}

/**
 * Seals and opens the secret fields of credentials with the server's key, each bound to
 * its row and column. Opened at start by {@link CredentialVault.open}, which refuses a
 * key that is not the one that sealed what is stored.
 */
export class CredentialVault {
  readonly #box: SecretBox;

  private constructor(box: SecretBox) {
    this.#box = box;
  }

  /**
   * The vault of `key`, after checking it against the stored check value: the first
   * start stores one; a key that does not open it is refused ({@link SecretsKeyMismatchError}),
   * unless `previous` opens it, when every stored secret is sealed again with `key`, all
   * or nothing, before anything else reads them.
   */
  static async open(store: CredentialStore, key: Buffer, options: { previous?: Buffer | undefined; source: string }): Promise<VaultOpening> {
    const box = new SecretBox(key);
    const vault = new CredentialVault(box);
    const stored = (await store.keyCheck()) ?? (await store.initKeyCheck(box.seal(CHECK_TEXT, CHECK_CONTEXT)));
    if (opensCheck(box, stored)) return { vault, resealed: 0, previousUnused: options.previous !== undefined };
    if (options.previous === undefined) throw new SecretsKeyMismatchError(options.source);
    const old = new SecretBox(options.previous);
    if (!opensCheck(old, stored)) throw new SecretsKeyMismatchError(`${options.source} and --secrets-key-previous`);
    const resealed = await store.resealAll(
      (field) => box.seal(old.open(field.sealed, contextOf(field.id, field.column)), contextOf(field.id, field.column)),
      box.seal(CHECK_TEXT, CHECK_CONTEXT),
    );
    return { vault, resealed, previousUnused: false };
  }

  /** `values` sealed for credential `id`. */
  sealValues(id: string, values: Readonly<Record<string, string>>): string {
    return this.#box.seal(JSON.stringify(values), contextOf(id, "values_sealed"));
  }

  /** The values of `row`. */
  openValues(row: CredentialRow): Record<string, string> {
    return JSON.parse(this.#box.open(row.values_sealed, contextOf(row.id, "values_sealed"))) as Record<string, string>;
  }

  /** `settings` sealed for credential `id`. */
  sealTotp(id: string, settings: TotpSettings): string {
    return this.#box.seal(JSON.stringify(settings), contextOf(id, "totp_sealed"));
  }

  /** The TOTP settings of `row`, or `undefined` without a secret. */
  openTotp(row: CredentialRow): TotpSettings | undefined {
    return row.totp_sealed === null ? undefined : (JSON.parse(this.#box.open(row.totp_sealed, contextOf(row.id, "totp_sealed"))) as TotpSettings);
  }
}

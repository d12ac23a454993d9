import { credentialContext, type SecretsVault } from "../secrets/secrets-vault.js";
import type { CredentialRow } from "./credential-store.js";
import type { TotpSettings } from "./totp.js";

/** What a credential's sealed columns are bound to. */
type Owner = Pick<CredentialRow, "project_id" | "id" | "domain">;

/** Seals and opens credentials' secret columns, each bound to its row and column. */
export class CredentialSeals {
  readonly #vault: SecretsVault;

  constructor(vault: SecretsVault) {
    this.#vault = vault;
  }

  sealValues(row: Owner, values: Readonly<Record<string, string>>): string {
    return this.#vault.sealText(JSON.stringify(values), credentialContext(row, "values_sealed"));
  }

  openValues(row: CredentialRow): Record<string, string> {
    return JSON.parse(this.#vault.openText(row.values_sealed, credentialContext(row, "values_sealed"))) as Record<string, string>;
  }

  sealTotp(row: Owner, settings: TotpSettings): string {
    return this.#vault.sealText(JSON.stringify(settings), credentialContext(row, "totp_sealed"));
  }

  openTotp(row: CredentialRow): TotpSettings | undefined {
    return row.totp_sealed === null ? undefined : (JSON.parse(this.#vault.openText(row.totp_sealed, credentialContext(row, "totp_sealed"))) as TotpSettings);
  }
}

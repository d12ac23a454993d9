import { type SchemaCase, schemaRef } from "./types.js";

const at = (name: string, value: unknown, valid: boolean, rule: string): SchemaCase => ({ schema: schemaRef(name), rule, value, valid });

const credential = {
  id: "cred_1",
  name: "example-login",
  domain: "example.com",
  sso_provider: null,
  has_values: true,
  value_keys: ["password", "username"],
  has_totp_secret: false,
  created_at: "2026-11-01T09:30:00Z",
  updated_at: "2026-11-01T09:30:00Z",
};
const create = { name: "example-login", domain: "example.com", values: { username: "a@example.com", password: "p" } };
const fiftyOne = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));

/** Credentials: records, creates, updates, TOTP codes and their parts. */
export const credentialCases: readonly SchemaCase[] = [
  at("Credential", credential, true, "full record"),
  at("Credential", { ...credential, has_totp_secret: true, totp_code: "492039", totp_code_expires_at: "2026-11-01T09:30:30Z" }, true, "with the code just set"),
  at("Credential", { ...credential, values: { password: "p" } }, false, "values are never part of a record"),
  at("Credential", (({ value_keys: _v, ...rest }) => rest)(credential), false, "value_keys is required"),
  at("Credential", { ...credential, totp_code: "12ab56" }, false, "a code is digits"),
  at("CredentialName", "example-login", true, "name"),
  at("CredentialName", "with space", false, "name pattern"),
  at("CredentialName", "x".repeat(256), false, "name at most 255"),
  at("CredentialName", "cred_aaaaaaaaaaaaaaaaaaaaaaaa", false, "not shaped like an id"),
  at("CredentialName", "cred_aaaa", true, "a shorter cred_ name is no id"),
  at("CredentialDomain", "*.Example.COM", true, "wildcard and capitals, normalized by the server"),
  at("CredentialDomain", "127.0.0.1", true, "an IP address"),
  at("CredentialDomain", "https://example.com", false, "a URL is not a domain"),
  at("CredentialDomain", "exa mple.com", false, "no spaces"),
  at("CredentialDomain", "-bad.example.com", false, "a label does not start with a hyphen"),
  at("CredentialDomain", `${"a".repeat(64)}.com`, false, "a label is at most 63 characters"),
  at("CredentialValues", { username: "u", password: "p" }, true, "values"),
  at("CredentialValues", { "bad key": "v" }, false, "key pattern"),
  at("CredentialValues", { password: "" }, false, "a value is not empty"),
  at("CredentialValues", { password: "x".repeat(4097) }, false, "a value is at most 4,096 characters"),
  at("CredentialValues", { password: 42 }, false, "a value is a string"),
  at("CredentialValues", fiftyOne, false, "at most 50 values"),
  at("TotpSecret", "JBSWY3DPEHPK3PXP", true, "base32"),
  at("TotpSecret", "", false, "not empty"),
  at("TotpSecret", "A".repeat(2049), false, "at most 2,048 characters"),
  at("CreateCredentialRequest", create, true, "name, domain and values"),
  at("CreateCredentialRequest", { ...create, sso_provider: "google", totp_secret: "JBSWY3DPEHPK3PXP" }, true, "with SSO provider and TOTP secret"),
  at("CreateCredentialRequest", (({ values: _v, ...rest }) => rest)(create), false, "values are required"),
  at("CreateCredentialRequest", { ...create, sso_provider: "" }, false, "an SSO provider is not empty on create"),
  at("CreateCredentialRequest", { ...create, id: "cred_1" }, false, "no other properties"),
  at("UpdateCredentialRequest", {}, true, "nothing to change"),
  at(
    "UpdateCredentialRequest",
    { remove_value_keys: ["password"], values: { password: "new" }, sso_provider: null, totp_secret: "" },
    true,
    "remove, merge, clear",
  ),
  at("UpdateCredentialRequest", { remove_value_keys: ["bad key"] }, false, "remove_value_keys follow the key pattern"),
  at("UpdateCredentialRequest", { domain: "other.com" }, false, "the domain cannot change"),
  at("CredentialTotpCode", { code: "492039", expires_at: "2026-11-01T09:30:30Z" }, true, "code and expiry"),
  at("CredentialTotpCode", { code: "492039" }, false, "expires_at is required"),
];

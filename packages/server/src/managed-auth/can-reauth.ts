import type { ManagedAuth } from "@browser-service/types";
import type { ConnectionInternals } from "../auth-connections/auth-connection-store.js";
import type { CredentialRow } from "../credentials/credential-store.js";

/**
 * `can_reauth` and `can_reauth_reason` from what is stored: a prior successful login, a
 * credential the site did not reject in the last flow, and what the last login needed (an email link or a code sent to the user
 * cannot be answered unattended; an authenticator code can, when the credential holds
 * its secret).
 */
export function reauthOf(
  record: ManagedAuth,
  internals: ConnectionInternals,
  credential: CredentialRow | undefined,
): Pick<ManagedAuth, "can_reauth" | "can_reauth_reason"> {
  const needs = new Set(internals.requirements ?? []);
  if (internals.succeeded !== true) return { can_reauth: false, can_reauth_reason: "no_prior_successful_login" };
  if (record.credential === undefined) return { can_reauth: false, can_reauth_reason: "no_credential" };
  if (internals.storedRejected === true) return { can_reauth: false, can_reauth_reason: "requires_customer_input" };
  if (needs.has("external_action")) return { can_reauth: false, can_reauth_reason: "requires_external_action" };
  if (needs.has("sms_code")) return { can_reauth: false, can_reauth_reason: "requires_sms_code" };
  if (needs.has("email_code") || needs.has("code")) return { can_reauth: false, can_reauth_reason: "requires_email_code" };
  if (needs.has("totp_code") && credential?.totp_sealed == null) return { can_reauth: false, can_reauth_reason: "requires_totp_without_secret" };
  if (needs.has("choice")) return { can_reauth: false, can_reauth_reason: "requires_customer_input" };
  return needs.size === 0 ? { can_reauth: true, can_reauth_reason: "has_credential" } : { can_reauth: true, can_reauth_reason: "requirements_satisfiable" };
}

/**
 * `record` with `health_check_unavailable_reason` as the seed defines it: `no_auth_check_url`
 * while health checks are on and no page to check the session on is known yet (no login
 * has succeeded, so no `post_login_url`); omitted otherwise.
 */
export function withCheckReason(record: ManagedAuth): ManagedAuth {
  const { health_check_unavailable_reason: _, ...rest } = record;
  return record.health_checks !== false && record.post_login_url == null ? { ...rest, health_check_unavailable_reason: "no_auth_check_url" } : rest;
}

import type { ManagedAuth } from "@browser-service/types";

/**
 * A connection as it reads at `now` (milliseconds since the epoch), following the spec's
 * login-flow transition `IN_PROGRESS` → `EXPIRED` once `flow_expires_at` is reached:
 * `hosted_url` and `live_view_url`, which only serve a flow in progress, become `null`,
 * and every other field keeps its last value (`flow_step` says where the flow stopped).
 * Applied on read, so the stored record stays as loaded and time alone moves the flow.
 */
export function connectionAt(record: ManagedAuth, now: number): ManagedAuth {
  if (record.flow_status !== "IN_PROGRESS" || record.flow_expires_at == null) return record;
  // RFC 3339 allows a lower-case `t` and `z`, which Date.parse does not promise to read.
  const expiresAt = Date.parse(record.flow_expires_at.toUpperCase());
  // A time Date.parse cannot read (a leap second, `:60`) leaves the flow as stored, never a guess.
  if (Number.isNaN(expiresAt) || now < expiresAt) return record;
  return { ...record, flow_status: "EXPIRED", hosted_url: null, live_view_url: null };
}

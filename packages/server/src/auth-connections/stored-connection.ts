import type { ManagedAuth } from "@browser-service/types";
import { AuthConnectionExistsError, NotFoundError } from "../http/api-errors.js";
import type { AuthConnectionRow, ConnectionInternals } from "./auth-connection-store.js";

/** A connection's row as both databases give it. */
export interface StoredConnectionRow {
  project_id: string;
  record: string;
  internals: string;
}

/** The row as the flows work with it. */
export function fromStoredConnection(row: StoredConnectionRow): AuthConnectionRow {
  return { projectId: row.project_id, record: JSON.parse(row.record) as ManagedAuth, internals: JSON.parse(row.internals) as ConnectionInternals };
}

/** 404 for a connection that is not in the project (another project's reads the same). */
export const connectionNotFound = (id: string) => new NotFoundError(`No auth connection has the id "${id}" in this project.`);

/** 409 for a second connection of one profile and domain. */
export const connectionExists = (record: ManagedAuth) =>
  new AuthConnectionExistsError(`The profile "${record.profile_name}" already has an auth connection for ${record.domain}; change that one instead.`);

/**
 * The `next_check_at` column of a row: `NULL` without health checks, `0` for one the
 * health checks are yet to schedule, else when its check is due.
 */
export function nextCheckColumn({ record, internals }: AuthConnectionRow): number | null {
  return record.health_checks === false ? null : (internals.nextCheckAt ?? 0);
}

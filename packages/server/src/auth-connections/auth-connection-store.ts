import type { ManagedAuth } from "@browser-service/types";

/** A stored connection and the project it belongs to. */
export interface StoredAuthConnection {
  projectId: string;
  record: ManagedAuth;
}

/** Managed auth connections, each a validated `ManagedAuth` record scoped to one project. */
export interface AuthConnectionStore {
  /**
   * The connection with this id in the project as it reads at `now` (a flow past its
   * `flow_expires_at` reads as `EXPIRED`); one in another project is 404 `not_found` too.
   */
  get(projectId: string, id: string, now?: number): Promise<ManagedAuth>;
  /** Replaces every stored connection; must run inside a unit of work. */
  replaceAll(connections: StoredAuthConnection[]): Promise<void>;
}

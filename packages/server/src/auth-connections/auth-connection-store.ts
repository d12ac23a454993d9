import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";

/** How many timeline events a connection keeps, newest first: a check every few seconds must not grow it for ever. */
export const TIMELINE_EVENTS_KEPT = 1000;

/** A stored connection and the project it belongs to. */
export interface StoredAuthConnection {
  projectId: string;
  record: ManagedAuth;
}

/** What the server keeps about a connection's past flows beside its record: never a secret. */
export interface ConnectionInternals {
  /** Whether a login or re-auth of the connection ever succeeded. */
  succeeded?: boolean;
  /** The kinds of input the last successful login needed (`identifier`, `password`, `totp_code`, `code`, `external_action`, `choice`, `account`). */
  requirements?: string[];
  /** The label of the account picked in the last successful login: its next flows pick it again. */
  account?: string | undefined;
  /**
   * The site rejected the stored credential in the last flow: no re-authentication tries
   * it again (an account could be locked) until a login succeeds.
   */
  storedRejected?: boolean | undefined;
  /** The id of the connection's latest flow: a flow superseded or ended writes nothing more. */
  flowId?: string;
  /** When that flow started (its timeline event's `timestamp`). */
  flowStartedAt?: string;
  /**
   * That flow's hosted login page (see `HostedAccess`): the digest of its code until the
   * code is used, then of the one token it gave.
   */
  hosted?: { codeSha256?: string; tokenSha256?: string };
  /**
   * When the next health check is due (ms since the epoch); absent: the health checks
   * schedule one from the connection's interval. Ignored while `health_checks` is false.
   */
  nextCheckAt?: number | undefined;
}

/** A connection as its flows work with it: record and internals. */
export interface AuthConnectionRow extends StoredAuthConnection {
  internals: ConnectionInternals;
}

/** Which page of {@link AuthConnectionStore.list} to read. */
export interface AuthConnectionPage {
  offset: number;
  limit: number;
  domain?: string | undefined;
  profileName?: string | undefined;
  /** Id exactly, or domain or profile name containing it in any letter case. */
  query?: string | undefined;
}

/** Which page of a connection's timeline to read, newest first. */
export interface TimelinePage {
  offset: number;
  limit: number;
  type?: ManagedAuthTimelineEvent["type"] | undefined;
}

/** Managed auth connections, each a `ManagedAuth` record scoped to one project, and their timelines. */
export interface AuthConnectionStore {
  /**
   * The connection with this id in the project as it reads at `now` (a flow past its
   * `flow_expires_at` reads as `EXPIRED`); one in another project is 404 `not_found` too.
   */
  get(projectId: string, id: string, now?: number): Promise<ManagedAuth>;
  /** The connection with this id in the project as stored (no expiry applied), or `undefined`. */
  find(projectId: string, id: string): Promise<AuthConnectionRow | undefined>;
  /** Stores a new connection; one for the same profile and domain in the project is 409 `auth_connection_exists`. */
  insert(row: AuthConnectionRow): Promise<void>;
  /** One page of the project's connections, oldest first. */
  list(projectId: string, page: AuthConnectionPage): Promise<{ items: ManagedAuth[]; hasMore: boolean }>;
  /**
   * Replaces connection `id` of the project with what `change` makes of it, in one
   * transaction; `undefined` when it is gone (or `change` returns `undefined`: nothing changes).
   */
  update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): Promise<AuthConnectionRow | undefined>;
  /** Deletes connection `id` of the project and its timeline; `false` when it was gone. */
  delete(projectId: string, id: string): Promise<boolean>;
  /** Up to `limit` connections of any project whose health check is due at `now` (or is to be scheduled), most overdue first. */
  due(now: number, limit: number): Promise<AuthConnectionRow[]>;
  /** Every connection whose flow is stored `IN_PROGRESS`, in any project. */
  inProgress(): Promise<AuthConnectionRow[]>;
  /** Stores `event` in the connection's timeline, replacing the event with the same id; past {@link TIMELINE_EVENTS_KEPT}, the oldest go. */
  putTimelineEvent(projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): Promise<void>;
  /** One page of a connection's timeline, newest first. */
  timeline(projectId: string, connectionId: string, page: TimelinePage): Promise<{ items: ManagedAuthTimelineEvent[]; hasMore: boolean }>;
  /** Replaces every connection loaded from fixtures (no other); must run inside a unit of work. */
  replaceAll(connections: StoredAuthConnection[]): Promise<void>;
}

import type { WebMcpInvocationResult } from "@browser-service/types";
import type { ApiKeyStore } from "../auth/api-key-store.js";
import type { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import type { BrowserService } from "../browsers/browser-service.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import type { BrowserUrls } from "../cdp/public-url.js";
import type { CredentialStore } from "../credentials/credential-store.js";
import type { ExtensionStore } from "../extensions/extension-store.js";
import type { ConnectionCounts } from "../http/connection-limits.js";
import type { RateLimits } from "../http/rate-limiter.js";
import type { PoolReservationStore } from "../limits/pool-reservation-store.js";
import type { UsageStore } from "../limits/usage-store.js";
import type { LoginFlows } from "../managed-auth/login-flows.js";
import type { Cluster } from "../nodes/cluster.js";
import type { NodeStore } from "../nodes/node-store.js";
import type { PeerCalls } from "../nodes/peer-calls.js";
import type { OrganizationStore } from "../organization/organization-store.js";
import type { ProfileStates } from "../profiles/profile-states.js";
import type { ProfileStore } from "../profiles/profile-store.js";
import type { ProjectStore } from "../projects/project-store.js";
import type { SecretsVault } from "../secrets/secrets-vault.js";
import type { DataDirLayout } from "../storage/data-dir.js";
import type { TelemetryStore } from "../telemetry/sql-telemetry-store.js";
import type { TelemetryService } from "../telemetry/telemetry-service.js";
import type { WebMcpService } from "../webmcp/webmcp-service.js";

/**
 * One store per table family of a data directory's database, and what the set does as a
 * whole. Every member is an interface: the SQLite implementation (`app/stores.ts`) is one,
 * and a second database fills the same set. Declared with the routes that use it, so that
 * no lower folder needs to know every store.
 */
export interface Stores {
  layout: DataDirLayout;
  organizations: OrganizationStore;
  projects: ProjectStore;
  apiKeys: ApiKeyStore;
  usage: UsageStore;
  browsers: BrowserStore;
  extensions: ExtensionStore;
  credentials: CredentialStore;
  profiles: ProfileStore;
  authConnections: AuthConnectionStore;
  poolReservations: PoolReservationStore;
  /** Browsers' telemetry events, kept after they end for the retention period. */
  telemetry: TelemetryStore;
  /** The servers sharing the database and their leases; only a database several servers can share has it. */
  nodes?: NodeStore;
  /**
   * Runs `work` as ONE transaction across the stores: every store call it makes (awaited
   * inside it) commits together, or (when it rejects) none does, and the error is
   * rethrown. Other calls made meanwhile are not part of it: each implementation keeps
   * them out (SQLite's makes them wait until the unit ends). Store methods documented
   * "must run inside a unit of work" are called only here; units of work do not nest.
   */
  unitOfWork<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Settles once every commit made so far is on disk; `undefined` when nothing is
   * waiting, so a response with nothing to wait for costs no promise.
   */
  durable(): Promise<void> | undefined;
  /** Puts every commit made so far on disk before returning (start-up, key issuing). */
  flush(): void;
  /** Closes the database; the stores are unusable afterwards. */
  close(): Promise<void>;
}

/** What the route handlers work with. */
export interface ApiDeps {
  stores: Stores;
  /** Seals and opens what is stored secretly (credentials' values, profiles' state) with the server's key. */
  vault: SecretsVault;
  /** Profiles' saved state, sealed. */
  profileStates: ProfileStates;
  /** The login flows of auth connections this node runs. */
  loginFlows: LoginFlows;
  browsers: BrowserService;
  /** How a browser's URLs (`cdp_ws_url`, `live_view_url`...) are written for a request. */
  browserUrls: BrowserUrls;
  /** WebMCP of the running browsers. */
  webmcp: WebMcpService;
  /** Requests per API key and failed authentications per client address. */
  rateLimits: RateLimits;
  /** The organization's concurrency limit, from its plan. */
  planLimit: number;
  /** Whether project administration answers 404 `projects_disabled`. */
  projectsDisabled: boolean;
  /** This node among the servers sharing a PostgreSQL database; `undefined` on SQLite (one server). */
  cluster: Cluster | undefined;
  /** The connections' counts per client: another node's connection is counted under none (it carries many clients). */
  connections?: ConnectionCounts | undefined;
  /** The calls other nodes forward to this node's browsers (the routes serve their own operations); `undefined` without a node secret. */
  peerCalls?: PeerCalls | undefined;
  /** Told how each WebMCP invocation run on this node ended (the server's metrics). */
  observeInvocation?: ((outcome: InvocationOutcome) => void) | undefined;
  /** The browsers' telemetry: captures of this node's browsers, and every browser's kept events. */
  telemetry?: TelemetryService | undefined;
}

/**
 * How a WebMCP invocation run on this node ended: its result's `status`, or
 * `outcome_unknown` (504, it may have run), `refused` (a 4xx before it ran) or `failed`
 * (the server's fault).
 */
export type InvocationOutcome = WebMcpInvocationResult["status"] | "outcome_unknown" | "refused" | "failed";

import type { ApiKeyStore } from "../auth/api-key-store.js";
import type { AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import type { ExtensionStore } from "../extensions/extension-store.js";
import type { PoolReservationStore } from "../limits/pool-reservation-store.js";
import type { UsageStore } from "../limits/usage-store.js";
import type { OrganizationStore } from "../organization/organization-store.js";
import type { ProjectStore } from "../projects/project-store.js";
import type { SqliteDatabase } from "../storage/database.js";
import type { DataDirLayout } from "../storage/data-dir.js";
import type { BrowserService } from "../browsers/browser-service.js";
import type { CdpUrls } from "../cdp/public-url.js";
import type { RateLimits } from "../http/rate-limiter.js";
import type { WebMcpService } from "../webmcp/webmcp-service.js";

/**
 * The database of a data directory and one store per table family over it. Declared with
 * the routes that use it, so that the composition root (`app/stores.ts`) fills it and no
 * lower folder needs to know every store.
 */
export interface Stores {
  db: SqliteDatabase;
  layout: DataDirLayout;
  organizations: OrganizationStore;
  projects: ProjectStore;
  apiKeys: ApiKeyStore;
  usage: UsageStore;
  browsers: BrowserStore;
  extensions: ExtensionStore;
  authConnections: AuthConnectionStore;
  poolReservations: PoolReservationStore;
}

/** What the route handlers work with. */
export interface ApiDeps {
  stores: Stores;
  browsers: BrowserService;
  /** How `cdp_ws_url` is written for a request. */
  cdpUrls: CdpUrls;
  /** WebMCP of the running browsers. */
  webmcp: WebMcpService;
  /** Requests per API key and failed authentications per client address. */
  rateLimits: RateLimits;
  /** The organization's concurrency limit, from its plan. */
  planLimit: number;
  /** Whether project administration answers 404 `projects_disabled`. */
  projectsDisabled: boolean;
}

import type { BrowserService } from "../browsers/browser-service.js";
import type { CdpUrls } from "../cdp/public-url.js";
import type { RateLimits } from "../http/rate-limiter.js";
import type { Stores } from "../storage/stores.js";
import type { WebMcpService } from "../webmcp/webmcp-service.js";

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

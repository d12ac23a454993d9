/**
 * The reference implementation of the browser service API: projects, concurrency limits,
 * extension upload, managed auth connections, browsers (real Chromium) and WebMCP tool
 * discovery and invocation (through Chromium's `WebMCP` DevTools domain) over HTTP/JSON,
 * stored in a SQLite file under a data directory.
 *
 * @packageDocumentation
 */

export { type CliIo, runCli } from "./app/cli.js";
export { type Command, ConfigError, DEFAULT_CONFIG, HELP_TEXT, parseCommand, type ServerConfig } from "./app/config.js";
export type { FirstStart } from "./app/first-start.js";
export { KeyIssueError } from "./app/issue-key.js";
export { type BrowserServiceServer, type CreateServerOptions, createServer, DEFAULT_LIVE_VIEW_LIMITS } from "./app/server.js";
export type { Credential, IssuedKey } from "./auth/api-key-store.js";
export {
  type BrowserExit,
  BrowserLaunchError,
  type BrowserLauncher,
  type LaunchedBrowser,
  type LaunchOptions,
  ProfileTooLargeError,
} from "./browsers/browser-launcher.js";
export { CHROMIUM_FLAGS, ChromiumLauncher, type ChromiumLauncherOptions } from "./browsers/chromium-launcher.js";
export type { WarmPoolStats } from "./browsers/warm-pool.js";
export { CdpPipe, type CdpPipeOptions, type OversizedMessage } from "./cdp/cdp-pipe.js";
export {
  CdpChannel,
  type CdpChannelOptions,
  CdpRouter,
  CdpRouterError,
  type CdpRouterOptions,
  type ChannelCloseReason,
  type ChannelMessage,
  type CommandObserver,
  type DroppedEvent,
  type ObservedCommand,
  type ProtocolMessage,
} from "./cdp/cdp-router.js";
export type { ClientCommand } from "./cdp/client-command.js";
export type { CdpEndpointLimits } from "./cdp/client-limits.js";
export { PublicUrlError } from "./cdp/public-url.js";
export { EgressPolicy, type EgressPolicyOptions, type EgressVerdict } from "./egress/egress-policy.js";
export type { HostLookup } from "./egress/socks-proxy.js";
export { type AuthConnectionFixture, type Fixtures, FixturesError, type PoolReservationFixture, parseFixtures } from "./fixtures/fixtures-file.js";
export { ApiError, type ApiErrorOptions, CdpClientLimitError } from "./http/api-errors.js";
export { type BrowserOfConnection, type TrustedProxy, TrustProxyError, trustedProxies } from "./http/client-key.js";
export type { RateLimit, RateLimitSettings } from "./http/rate-limiter.js";
export type { ResponseCheckOptions, ResponseMismatch } from "./http/response-check.js";
export type { LiveViewLimits } from "./live-view/live-view-limits.js";
export { NodeIdInUseError } from "./nodes/cluster.js";
export type { Organization } from "./organization/organization-store.js";
export type { ProjectRow } from "./projects/project-store.js";
export { type CgroupCheck, type CgroupView, DEFAULT_RESOURCE_BUDGET, type OverBudget, type ResourceBudget } from "./sandbox/browser-cgroups.js";
export { checkSandbox, type SandboxCheck } from "./sandbox/sandbox-check.js";
export { DEFAULT_DOWNLOAD_BYTES, DEFAULT_PROFILE_BYTES, DEFAULT_SHM_BYTES } from "./sandbox/sandbox-command.js";
export { DEFAULT_SANDBOX_UID_BASE, SandboxUids, SandboxUidsExhaustedError } from "./sandbox/sandbox-uids.js";
export { DataDirInUseError, type DataDirLayout, DataDirNotOwnedError } from "./storage/data-dir.js";
export { StorageError, type StorageErrorCode } from "./storage/database.js";
export { MigrationError } from "./storage/migrations.js";
export { OtlpDestinationsError, parseOtlpDestinations } from "./telemetry/otlp-destinations.js";
export type { OtlpDestination } from "./telemetry/otlp-export.js";
export type { SnapshotBuildCounts } from "./webmcp/browser-webmcp.js";

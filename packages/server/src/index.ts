/**
 * The reference implementation of the browser service API: projects, concurrency limits,
 * extension upload, managed auth connections, browsers (real Chromium) and WebMCP tool
 * discovery and invocation (through Chromium's `WebMCP` DevTools domain) over HTTP/JSON,
 * stored in a SQLite file under a data directory.
 *
 * @packageDocumentation
 */
export { createServer, type BrowserServiceServer, type CreateServerOptions } from "./app/server.js";
export { runCli, type CliIo } from "./app/cli.js";
export { ConfigError, DEFAULT_CONFIG, HELP_TEXT, parseCommand, type Command, type ServerConfig } from "./app/config.js";
export { BrowserLaunchError, type BrowserExit, type BrowserLauncher, type LaunchedBrowser, type LaunchOptions } from "./browsers/browser-launcher.js";
export { ChromiumLauncher, CHROMIUM_FLAGS, type ChromiumLauncherOptions } from "./browsers/chromium-launcher.js";
export { DEFAULT_DOWNLOAD_BYTES, DEFAULT_PROFILE_BYTES, DEFAULT_SHM_BYTES } from "./sandbox/sandbox-command.js";
export { checkSandbox, type SandboxCheck } from "./sandbox/sandbox-check.js";
export { SandboxUids, SandboxUidsExhaustedError, DEFAULT_SANDBOX_UID_BASE } from "./sandbox/sandbox-uids.js";
export type { HostLookup } from "./egress/socks-proxy.js";
export { EgressPolicy, type EgressPolicyOptions, type EgressVerdict } from "./egress/egress-policy.js";
export type { WarmPoolStats } from "./browsers/warm-pool.js";
export type { SnapshotBuildCounts } from "./webmcp/browser-webmcp.js";
export { CdpRouter, CdpChannel, CdpRouterError, type ChannelCloseReason, type ChannelMessage, type CdpRouterOptions, type CdpChannelOptions, type DroppedEvent, type ProtocolMessage } from "./cdp/cdp-router.js";
export { CdpPipe, type CdpPipeOptions, type OversizedMessage } from "./cdp/cdp-pipe.js";
export type { CdpEndpointLimits } from "./cdp/client-limits.js";
export { PublicUrlError } from "./cdp/public-url.js";
export { FixturesError, parseFixtures, type AuthConnectionFixture, type Fixtures, type PoolReservationFixture } from "./fixtures/fixtures-file.js";
export { KeyIssueError } from "./app/issue-key.js";
export type { IssuedKey, Credential } from "./auth/api-key-store.js";
export type { FirstStart } from "./app/first-start.js";
export type { Organization } from "./organization/organization-store.js";
export type { ProjectRow } from "./projects/project-store.js";
export type { ResponseCheckOptions, ResponseMismatch } from "./http/response-check.js";
export type { RateLimit, RateLimitSettings } from "./http/rate-limiter.js";
export { TrustProxyError, trustedProxies, type BrowserOfConnection, type TrustedProxy } from "./http/client-key.js";
export { DataDirInUseError, DataDirNotOwnedError, type DataDirLayout } from "./storage/data-dir.js";
export { MigrationError } from "./storage/migrations.js";
export { StorageError, type StorageErrorCode } from "./storage/database.js";
export { ApiError, CdpClientLimitError, type ApiErrorOptions } from "./http/api-errors.js";

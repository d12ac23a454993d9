import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import type { FastifyBaseLogger } from "fastify";
import type { AuthConnectionRow, AuthConnectionStore } from "../auth-connections/auth-connection-store.js";
import { connectionAt } from "../auth-connections/flow-expiry.js";
import type { BrowserService } from "../browsers/browser-service.js";
import type { BrowserRow } from "../browsers/browser-store.js";
import type { ProfileStates } from "../profiles/profile-states.js";
import type { ProfileStore } from "../profiles/profile-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import { newId } from "../storage/ids.js";
import type { DestinationName } from "../telemetry/telemetry-settings.js";
import { withCheckReason } from "./can-reauth.js";
import { hostOf, isWithin } from "./credential-hosts.js";
import { connectionTelemetry, type FlowUrls, type LoginFlows } from "./login-flows.js";
import { LoginPageDriver } from "./login-page-driver.js";

/** The seed's default `health_check_interval`, in seconds, for a connection stored without one. */
const DEFAULT_INTERVAL_SECONDS = 3600;
/** How many due connections one tick takes; each is checked in turn, one browser at a time per node. */
const PER_TICK = 4;
/** How long a check's page may take to load. */
const CHECK_LOAD_MS = 30_000;

/** What a check found: the session valid, expired, or nothing either way (the page did not load). */
export type SessionFound = "AUTHENTICATED" | "NEEDS_AUTH" | "inconclusive";

/** What the health checks need from the rest of the server. */
export interface HealthChecksDeps {
  connections: AuthConnectionStore;
  browsers: BrowserService;
  profiles: ProfileStore;
  profileStates: ProfileStates;
  flows: LoginFlows;
  /** The project a connection belongs to, or `undefined` when it is gone. */
  projectOf: (projectId: string) => Promise<ProjectRow | undefined>;
  /** The URLs of a re-authentication (no request to take a host from). */
  flowUrls: FlowUrls;
  log: FastifyBaseLogger;
  /** Checks every connection this often instead of its `health_check_interval` (tests, demos). */
  everySeconds?: number | undefined;
  /** The OTLP destinations a connection's `browser.telemetry` may name; default none. */
  telemetryDestinations?: () => readonly DestinationName[];
}

/**
 * Runs each connection's health checks on schedule: the due time is stored with the
 * connection and claimed in one transaction before a check, so a restart or a second node
 * checks it once. A check opens the connection's profile (read only) at its
 * `post_login_url` and reads whether a login form is shown; an expired session starts a
 * `REAUTH` flow when `auto_reauth` and `can_reauth` allow it, else marks `NEEDS_AUTH`.
 */
export class HealthChecks {
  readonly #deps: HealthChecksDeps;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: HealthChecksDeps) {
    this.#deps = deps;
  }

  /** Starts looking for due checks every `tickMs`. */
  start(tickMs: number): void {
    this.#timer = setInterval(() => {
      if (this.#ticking !== undefined || this.#stopped) return;
      this.#ticking = this.tick()
        .catch((error: unknown) => this.#deps.log.error({ err: error }, "the health checks could not run"))
        .finally(() => {
          this.#ticking = undefined;
        });
    }, tickMs);
    this.#timer.unref();
  }

  /** Stops scheduling and waits for the check under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#ticking;
  }

  /** Schedules or checks each connection due now. */
  async tick(): Promise<void> {
    for (const due of await this.#deps.connections.due(Date.now(), PER_TICK)) {
      if (this.#stopped) return;
      // The interval counts from this check, not from the tick: the checks before it in this tick took their time.
      const claimed = await this.#claim(due, Date.now());
      if (claimed === undefined || due.internals.nextCheckAt === undefined) continue;
      await this.#check(claimed).catch((error: unknown) =>
        this.#deps.log.error({ err: error, connection: due.record.id }, "a health check could not be recorded"),
      );
    }
  }

  #intervalMs(record: ManagedAuth): number {
    return (this.#deps.everySeconds ?? record.health_check_interval ?? DEFAULT_INTERVAL_SECONDS) * 1000;
  }

  /** Moves the connection's due time on, if no one else did since `seen` was read; `undefined` when another node (or a change) won. */
  async #claim(seen: AuthConnectionRow, now: number): Promise<AuthConnectionRow | undefined> {
    return this.#deps.connections.update(seen.projectId, seen.record.id, (current) =>
      current.internals.nextCheckAt !== seen.internals.nextCheckAt || current.record.health_checks === false
        ? undefined
        : { ...current, internals: { ...current.internals, nextCheckAt: now + this.#intervalMs(current.record) } },
    );
  }

  async #check(row: AuthConnectionRow): Promise<void> {
    const { record, projectId } = row;
    // A flow under way says more than a check could; the next check comes on schedule.
    if (connectionAt(record, Date.now()).flow_status === "IN_PROGRESS") return;
    const checkedAt = new Date().toISOString();
    const url = record.post_login_url;
    let found: SessionFound = "inconclusive";
    let browserId: string | undefined;
    let reason: string | undefined;
    if (url == null) {
      reason = "no_auth_check_url";
    } else {
      const project = await this.#deps.projectOf(projectId);
      if (project === undefined) return;
      ({ found, browserId, reason } = await this.#visit(project, record, url));
    }
    const previous = record.status;
    const reauth = found === "NEEDS_AUTH" && record.auto_reauth !== false && record.can_reauth === true;
    const updated = await this.#deps.connections.update(projectId, record.id, (current) => ({
      ...current,
      record: withCheckReason({
        ...current.record,
        last_auth_check_at: checkedAt,
        last_auth_at: checkedAt,
        ...(found === "inconclusive" ? {} : { status: found }),
      }),
    }));
    if (updated === undefined) return;
    const event: ManagedAuthTimelineEvent = {
      id: newId("healthCheck"),
      type: "health_check",
      status: updated.record.status,
      timestamp: checkedAt,
      updated_at: new Date().toISOString(),
      previous_status: previous,
      ...(browserId === undefined ? {} : { browser_session_id: browserId }),
      ...(found === "inconclusive" ? { error_code: reason ?? "inconclusive", error_message: inconclusiveMessage(reason) } : {}),
    };
    await this.#deps.connections.putTimelineEvent(projectId, record.id, event);
    this.#deps.flows.changed(record.id);
    if (!reauth) return;
    const project = await this.#deps.projectOf(projectId);
    if (project === undefined) return;
    await this.#deps.flows
      .start(project, record.id, "REAUTH", this.#deps.flowUrls)
      .catch((error: unknown) => this.#deps.log.warn({ err: error, connection: record.id }, "a re-authentication could not start"));
  }

  /** Opens `url` in a browser with the connection's profile (never saving into it) and reads whether the session holds. */
  async #visit(project: ProjectRow, record: ManagedAuth, url: string): Promise<{ found: SessionFound; browserId?: string; reason?: string }> {
    const deps = this.#deps;
    const profile = await deps.profiles.get(project.id, record.profile_name);
    // No profile: nothing keeps the session.
    if (profile === undefined || profile.name !== record.profile_name) return { found: "NEEDS_AUTH" };
    let browser: BrowserRow;
    try {
      const state = await deps.profileStates.load(project.id, profile.id);
      const telemetry = connectionTelemetry(record, deps.telemetryDestinations?.() ?? []);
      browser = await deps.browsers.create(project, {
        profile: { id: profile.id, name: profile.name, save: false, state },
        timeoutSeconds: 120,
        internal: true,
        ...(telemetry === null ? {} : { telemetry }),
      });
    } catch (error) {
      deps.log.warn({ err: error, connection: record.id }, "no browser for a health check");
      return { found: "inconclusive", reason: "browser_unavailable" };
    }
    let page: LoginPageDriver | undefined;
    try {
      const router = deps.browsers.cdp(browser.id);
      if (router === undefined) return { found: "inconclusive", browserId: browser.id, reason: "browser_unavailable" };
      page = await LoginPageDriver.open(router);
      await page.navigate(url, CHECK_LOAD_MS);
      const reading = await page.read();
      const loginForm = reading.inputs.some((input) => input.kind === "password" || input.kind === "identifier");
      const onDomain = isWithin(hostOf(reading.url), record.domain);
      return { found: loginForm || !onDomain ? "NEEDS_AUTH" : "AUTHENTICATED", browserId: browser.id };
    } catch {
      return { found: "inconclusive", browserId: browser.id, reason: "page_unavailable" };
    } finally {
      await page?.close().catch(() => undefined);
      await deps.browsers
        .delete(browser, { discardChanges: true })
        .catch((error: unknown) => deps.log.error({ err: error }, "could not end a health check's browser"));
    }
  }
}

function inconclusiveMessage(reason: string | undefined): string {
  if (reason === "no_auth_check_url") return "No login has succeeded yet, so there is no page to check the session on.";
  if (reason === "browser_unavailable") return "No browser could be started for the check; the status is kept.";
  return "The page to check the session on did not load; the status is kept.";
}

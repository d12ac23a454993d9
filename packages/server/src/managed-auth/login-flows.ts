import type {
  BrowserTelemetryConfig,
  DiscoveredField,
  ManagedAuth,
  ManagedAuthChoice,
  ManagedAuthLoginResponse,
  ManagedAuthSubmitRequest,
  ManagedAuthTimelineEvent,
  MFAOption,
  SignInOption,
  SSOButton,
} from "@browser-service/types";
import type { FastifyBaseLogger } from "fastify";
import type { AuthConnectionRow, AuthConnectionStore, ConnectionInternals } from "../auth-connections/auth-connection-store.js";
import { connectionAt } from "../auth-connections/flow-expiry.js";
import type { BrowserService } from "../browsers/browser-service.js";
import type { BrowserRow } from "../browsers/browser-store.js";
import type { CredentialSeals } from "../credentials/credential-seals.js";
import type { CredentialRow, CredentialStore } from "../credentials/credential-store.js";
import {
  FlowInProgressError,
  FlowNotAwaitingInputError,
  InvalidSubmissionError,
  NameConflictError,
  NotFoundError,
  StaleInteractionError,
} from "../http/api-errors.js";
import type { ProfileStates } from "../profiles/profile-states.js";
import { newProfile, type ProfileStore } from "../profiles/profile-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import { newId } from "../storage/ids.js";
import { type DestinationName, resolveTelemetry } from "../telemetry/telemetry-settings.js";
import { reauthOf, withCheckReason } from "./can-reauth.js";
import { HostedAccess } from "./hosted-access.js";
import { type FlowAnswer, type FlowOutcome, type FlowPause, FlowStoppedError, type LearnedValues, LoginFlow, type StoredValues } from "./login-flow.js";
import { LoginPageDriver } from "./login-page-driver.js";

/** What the flows work with. */
export interface LoginFlowsDeps {
  connections: AuthConnectionStore;
  browsers: BrowserService;
  credentials: CredentialStore;
  seals: CredentialSeals;
  profiles: ProfileStore;
  profileStates: ProfileStates;
  log: FastifyBaseLogger;
  /** How long a flow may run, in seconds, from its start to `flow_expires_at`. */
  flowSeconds: number;
  /** The OTLP destinations a connection's `browser.telemetry` may name; default none. */
  telemetryDestinations?: () => readonly DestinationName[];
}

/**
 * What a connection's flow browsers capture: its `browser.telemetry` (or the deprecated
 * `browser_telemetry`), resolved as a create's is.
 */
export function connectionTelemetry(record: ManagedAuth, destinations: readonly DestinationName[]): BrowserTelemetryConfig | null {
  return resolveTelemetry(record.browser?.telemetry ?? record.browser_telemetry ?? null, destinations);
}

/** The URLs a flow shows, built for the request (or node) that starts it. */
export interface FlowUrls {
  /** The live view URL of the flow's browser: with `watchOnly`, the link that only watches. */
  liveView(browserId: string, token: string | undefined, watchOnly: boolean): string;
  /** The hosted login page's URL carrying `code`. */
  hosted(code: string): string;
}

interface RunningFlow {
  flowId: string;
  projectId: string;
  connectionId: string;
  type: "LOGIN" | "REAUTH";
  startedAt: string;
  browser: BrowserRow;
  stopped: boolean;
  timer?: NodeJS.Timeout;
  pause?: { shown: FlowPause; resolve: (answer: FlowAnswer) => void; reject: (error: Error) => void };
}

/** The flow fields of a record with no flow in progress any more: the two URLs that only serve one are gone. */
const ENDED = { hosted_url: null, live_view_url: null } as const;

/**
 * The login flows this node runs: one per connection at a time, each in a browser of its
 * own started with the connection's profile (saving into it only when the login
 * succeeded). Every move is written to the connection's record and timeline, then told
 * to whoever follows the connection's events.
 */
export class LoginFlows {
  readonly #deps: LoginFlowsDeps;
  readonly #running = new Map<string, RunningFlow>();
  /** Browsers of ended flows still being ended, by connection: a new flow waits for its profile. */
  readonly #stopping = new Map<string, Promise<void>>();
  readonly #listeners = new Map<string, Set<() => void>>();

  constructor(deps: LoginFlowsDeps) {
    this.#deps = deps;
  }

  /** Whether this node runs a flow of connection `connectionId` now. */
  runs(connectionId: string): boolean {
    return this.#running.has(connectionId);
  }

  /** Calls `listener` after each change of connection `connectionId` made on this node; returns the unsubscribe. */
  onChange(connectionId: string, listener: () => void): () => void {
    const set = this.#listeners.get(connectionId) ?? new Set();
    set.add(listener);
    this.#listeners.set(connectionId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(connectionId);
    };
  }

  /**
   * Starts a flow for connection `connectionId` of `project`: 409 `flow_in_progress` while
   * one runs and has not expired (an expired one is superseded). `liveViewUrl` writes the
   * live view URL of the flow's browser for the request.
   */
  async start(project: ProjectRow, connectionId: string, type: "LOGIN" | "REAUTH", urls: FlowUrls): Promise<ManagedAuthLoginResponse> {
    const deps = this.#deps;
    const row = await deps.connections.find(project.id, connectionId);
    if (row === undefined) throw new NotFoundError(`No auth connection has the id "${connectionId}" in this project.`);
    if (connectionAt(row.record, Date.now()).flow_status === "IN_PROGRESS") {
      throw new FlowInProgressError(
        `A login flow of this connection runs until ${row.record.flow_expires_at}; follow it, or delete the connection to cancel it.`,
      );
    }
    const stale = this.#running.get(connectionId);
    if (stale !== undefined) await this.#stop(stale, "EXPIRED");
    // A flow whose time ran out may still be ending its browser, which holds the profile.
    await this.#stopping.get(connectionId);
    const profile = await this.#profileOf(project.id, row.record.profile_name);
    const state = await deps.profileStates.load(project.id, profile.id);
    const telemetry = connectionTelemetry(row.record, deps.telemetryDestinations?.() ?? []);
    const browser = await deps.browsers.create(project, {
      profile: { id: profile.id, name: profile.name, save: true, state },
      timeoutSeconds: deps.flowSeconds + 60,
      ...(telemetry === null ? {} : { telemetry }),
      // It will hold the credential's values: no key of the project reaches its DevTools.
      internal: true,
    });
    const now = new Date();
    const expiresAt = new Date(now.getTime() + deps.flowSeconds * 1000).toISOString();
    // A flow that types a stored credential shows its browser watch-only: a click (say, on a
    // site's "show password") would reveal a value no key may read back.
    const live = urls.liveView(browser.id, deps.browsers.token(browser.id), row.record.credential !== undefined);
    const flowId = newId("loginFlow");
    const access = HostedAccess.issue(project.id, connectionId);
    const hosted = urls.hosted(access.code);
    const running: RunningFlow = {
      flowId,
      projectId: project.id,
      connectionId,
      type,
      startedAt: now.toISOString(),
      browser,
      stopped: false,
    };
    const started = await deps.connections.update(project.id, connectionId, (current) => ({
      ...current,
      internals: { ...current.internals, flowId: running.flowId, flowStartedAt: running.startedAt, hosted: access.stored },
      record: {
        ...current.record,
        flow_status: "IN_PROGRESS",
        flow_step: "DISCOVERING",
        flow_type: type,
        flow_expires_at: expiresAt,
        hosted_url: hosted,
        live_view_url: live,
        browser_session_id: browser.id,
        interaction_id: null,
        fields: null,
        choices: null,
        discovered_fields: null,
        mfa_options: null,
        pending_sso_buttons: null,
        sign_in_options: null,
        external_action_message: null,
        error_code: null,
        error_message: null,
        website_error: null,
      },
    }));
    if (started === undefined) {
      await deps.browsers.delete(browser, { discardChanges: true });
      throw new NotFoundError(`No auth connection has the id "${connectionId}" in this project.`);
    }
    this.#running.set(connectionId, running);
    await this.#timeline(running, started.record);
    this.changed(connectionId);
    // At flow_expires_at itself: from then on the record reads EXPIRED, so the browser ends too.
    running.timer = setTimeout(() => void this.#stop(running, "EXPIRED"), Math.max(0, Date.parse(expiresAt) - Date.now()));
    running.timer.unref();
    void this.#run(running, started);
    return { id: connectionId, flow_expires_at: expiresAt, flow_type: type, hosted_url: hosted, live_view_url: live };
  }

  /**
   * Gives the running flow of a connection what it waits for. 409 `flow_not_awaiting_input`
   * when it waits for nothing, 409 `stale_interaction` for another `interaction_id`, 400
   * `invalid_submission` for fields or a choice it did not ask for.
   */
  async submit(projectId: string, connectionId: string, body: ManagedAuthSubmitRequest): Promise<void> {
    const running = this.#running.get(connectionId);
    const row = await this.#deps.connections.find(projectId, connectionId);
    if (row === undefined) throw new NotFoundError(`No auth connection has the id "${connectionId}" in this project.`);
    const pause = running?.projectId === projectId ? running.pause : undefined;
    if (running === undefined || pause === undefined) {
      throw new FlowNotAwaitingInputError("No login flow of this connection is waiting for fields or a choice now; read the connection for its step.");
    }
    const { shown } = pause;
    if (body.interaction_id !== undefined && body.interaction_id !== shown.interactionId) {
      throw new StaleInteractionError(`The interaction "${body.interaction_id}" is over; the flow now waits under "${shown.interactionId}".`);
    }
    let answer: FlowAnswer;
    if ("selected_choice_id" in body && body.selected_choice_id !== undefined) {
      if (!shown.choices.some((choice) => choice.id === body.selected_choice_id)) {
        throw new InvalidSubmissionError(
          shown.choices.length === 0
            ? "This step asks for fields, not a choice; send field_values."
            : `The choice "${body.selected_choice_id}" was not offered; offered: ${shown.choices.map((choice) => choice.id).join(", ")}.`,
        );
      }
      answer = { choice: body.selected_choice_id };
    } else {
      const values = ("field_values" in body ? body.field_values : undefined) ?? {};
      if (shown.fields.length === 0) throw new InvalidSubmissionError("This step asks for a choice, not fields; send selected_choice_id.");
      const unknown = Object.keys(values).filter((id) => !shown.fields.some((field) => field.id === id));
      if (unknown.length > 0)
        throw new InvalidSubmissionError(`Unknown field ids: ${unknown.join(", ")}; asked for: ${shown.fields.map((field) => field.id).join(", ")}.`);
      const missing = shown.fields.filter((field) => field.required !== false && (values[field.id] ?? "") === "");
      if (missing.length > 0) throw new InvalidSubmissionError(`Missing values for: ${missing.map((field) => field.id).join(", ")}.`);
      answer = { values };
    }
    delete running.pause;
    await this.#patch(running, {
      flow_step: "SUBMITTING",
      fields: [],
      choices: [],
      discovered_fields: [],
      mfa_options: [],
      pending_sso_buttons: [],
      sign_in_options: [],
    });
    pause.resolve(answer);
  }

  /** Ends the flow of a connection being deleted (its browser ends without saving); the record is gone, so nothing is written. */
  async cancel(connectionId: string): Promise<void> {
    const running = this.#running.get(connectionId);
    if (running !== undefined) await this.#stop(running, "CANCELED", false);
  }

  /**
   * After a restart: each flow stored `IN_PROGRESS` that no node runs any more (its
   * browser is gone or crashed) ends `FAILED` with `flow_interrupted`, never stuck.
   */
  async recover(isRunning: (browserId: string) => Promise<boolean>): Promise<number> {
    let count = 0;
    for (const row of await this.#deps.connections.inProgress()) {
      const browserId = row.record.browser_session_id;
      if (browserId != null && (await isRunning(browserId))) continue;
      const ended = await this.#deps.connections.update(row.projectId, row.record.id, (current) =>
        current.record.flow_status !== "IN_PROGRESS"
          ? undefined
          : {
              ...current,
              record: {
                ...current.record,
                ...ENDED,
                flow_status: "FAILED",
                error_code: "flow_interrupted",
                error_message: "The server running this login flow stopped; start a new login.",
              },
            },
      );
      const { flowId, flowStartedAt } = row.internals;
      if (ended !== undefined && flowId !== undefined && flowStartedAt !== undefined) {
        await this.#deps.connections.putTimelineEvent(
          row.projectId,
          row.record.id,
          timelineEvent({ flowId, type: ended.record.flow_type ?? "LOGIN", startedAt: flowStartedAt, browserId: browserId ?? undefined }, ended.record),
        );
      }
      count++;
    }
    return count;
  }

  /** Ends every flow of this node (shutdown): each reads `FAILED` with `flow_interrupted`. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#running.values()].map((running) => this.#stop(running, "FAILED")));
  }

  async #run(running: RunningFlow, row: AuthConnectionRow): Promise<void> {
    const deps = this.#deps;
    let outcome: FlowOutcome;
    let page: LoginPageDriver | undefined;
    try {
      const router = deps.browsers.cdp(running.browser.id);
      if (router === undefined) throw new Error("The flow's browser ended before the flow began.");
      page = await LoginPageDriver.open(router);
      const flow = new LoginFlow({
        page,
        connection: row.record,
        stored: { ...(await this.#storedValues(running.projectId, row.record)), account: row.internals.account },
        report: (patch) => this.#patch(running, patch),
        ask: (shown, websiteError) => this.#ask(running, shown, websiteError),
        stopped: () => running.stopped,
      });
      outcome = await flow.run(deps.flowSeconds * 1000);
    } catch (error) {
      if (running.stopped || error instanceof FlowStoppedError) return;
      deps.log.warn({ err: error, connection: running.connectionId }, "a login flow failed");
      outcome = { status: "FAILED", code: "login_error", message: `The login could not go on: ${(error as Error).message}` };
    } finally {
      await page?.close().catch(() => undefined);
    }
    if (running.stopped) return;
    running.stopped = true;
    clearTimeout(running.timer);
    this.#running.delete(running.connectionId);
    if (outcome.status === "FAILED") {
      await deps.browsers
        .delete(running.browser, { discardChanges: true })
        .catch((error: unknown) => deps.log.error({ err: error }, "could not end a login browser"));
      await this.#patch(
        running,
        {
          ...ENDED,
          flow_status: "FAILED",
          error_code: outcome.code,
          error_message: outcome.message,
          website_error: outcome.websiteError ?? null,
          // A re-authentication runs because a check found the session expired: failing, nothing holds it.
          ...(running.type === "REAUTH" ? { status: "NEEDS_AUTH" as const } : {}),
        },
        outcome.code === "login_rejected" ? { storedRejected: true } : undefined,
      );
      return;
    }
    // The profile is saved (the browser ends and stores its state) before anyone reads SUCCESS.
    await deps.browsers.delete(running.browser);
    // A connection deleted (or a flow superseded) meanwhile keeps nothing of this login.
    if ((await deps.connections.find(running.projectId, running.connectionId))?.internals.flowId !== running.flowId) return;
    const credential = await this.#saveCredential(running.projectId, row.record, outcome.learned).catch((error: unknown) => {
      deps.log.error({ err: error, connection: running.connectionId }, "could not save the credential of a login");
      return undefined;
    });
    await this.#patch(
      running,
      {
        ...ENDED,
        status: "AUTHENTICATED",
        flow_status: "SUCCESS",
        flow_step: "COMPLETED",
        post_login_url: outcome.postLoginUrl,
        ...(credential === undefined ? {} : { credential: { name: credential.name } }),
      },
      // The next health check counts from this login (see `HealthChecks`).
      { succeeded: true, requirements: outcome.requirements, account: outcome.learned.account, nextCheckAt: undefined, storedRejected: undefined },
    );
  }

  async #ask(running: RunningFlow, shown: FlowPause, websiteError: string | null): Promise<FlowAnswer> {
    if (running.stopped) throw new FlowStoppedError("The flow was ended.");
    const answer = new Promise<FlowAnswer>((resolve, reject) => {
      running.pause = { shown, resolve, reject };
    });
    const mfa = shown.choices.filter((choice) => choice.type === "mfa_method");
    const sso = shown.choices.filter((choice) => choice.type === "sso_provider");
    const accounts = shown.choices.filter((choice) => choice.type === "account");
    await this.#patch(running, {
      flow_step: "AWAITING_INPUT",
      interaction_id: shown.interactionId,
      fields: shown.fields,
      choices: shown.choices,
      discovered_fields: shown.fields.map(
        (field): DiscoveredField => ({
          name: field.ref,
          type:
            field.type === "identifier"
              ? "text"
              : field.type === "totp_code"
                ? "totp"
                : field.type === "password"
                  ? "password"
                  : field.type === "code"
                    ? "code"
                    : "text",
          label: field.label ?? field.ref,
          selector: field.observed_selector ?? "",
          required: field.required ?? true,
        }),
      ),
      mfa_options: mfa.map((choice): MFAOption => ({ type: mfaOptionType(choice.mfa_type), label: choice.label, description: null, target: null })),
      pending_sso_buttons: sso.map(
        (choice): SSOButton => ({ label: choice.label, provider: choice.label.replace(/^.* with /i, ""), selector: choice.observed_selector ?? "" }),
      ),
      sign_in_options: accounts.map((choice): SignInOption => ({ id: choice.id, label: choice.label, description: null })),
      website_error: websiteError,
    });
    return answer;
  }

  async #stop(running: RunningFlow, status: "EXPIRED" | "CANCELED" | "FAILED", write = true): Promise<void> {
    if (running.stopped) return;
    running.stopped = true;
    clearTimeout(running.timer);
    this.#running.delete(running.connectionId);
    running.pause?.reject(new FlowStoppedError("The flow was ended."));
    const ending = this.#deps.browsers
      .delete(running.browser, { discardChanges: true })
      .catch((error: unknown) => this.#deps.log.error({ err: error }, "could not end a login browser"));
    this.#stopping.set(running.connectionId, ending);
    await ending;
    if (this.#stopping.get(running.connectionId) === ending) this.#stopping.delete(running.connectionId);
    if (!write) return;
    await this.#patch(
      running,
      status === "FAILED"
        ? { ...ENDED, flow_status: "FAILED", error_code: "flow_interrupted", error_message: "The server running this login flow stopped; start a new login." }
        : { ...ENDED, flow_status: status },
    ).catch((error: unknown) => this.#deps.log.error({ err: error }, "could not record the end of a login flow"));
  }

  async #patch(running: RunningFlow, patch: Partial<ManagedAuth>, internals?: ConnectionInternals): Promise<void> {
    // can_reauth is computed from the credential the connection ends up naming: the patch's, else the stored one.
    const credentialName =
      internals === undefined
        ? undefined
        : (patch.credential?.name ?? (await this.#deps.connections.find(running.projectId, running.connectionId))?.record.credential?.name);
    const credential = credentialName === undefined ? undefined : await this.#deps.credentials.get(running.projectId, credentialName);
    const updated = await this.#deps.connections.update(running.projectId, running.connectionId, (current) => {
      if (current.internals.flowId !== running.flowId) return undefined;
      const nextInternals = internals === undefined ? current.internals : { ...current.internals, ...internals };
      const record = withCheckReason({ ...current.record, ...patch });
      return { ...current, internals: nextInternals, record: internals === undefined ? record : { ...record, ...reauthOf(record, nextInternals, credential) } };
    });
    if (updated === undefined) return;
    await this.#timeline(running, updated.record);
    this.changed(running.connectionId);
  }

  async #timeline(running: RunningFlow, record: ManagedAuth): Promise<void> {
    const flow = { flowId: running.flowId, type: running.type, startedAt: running.startedAt, browserId: running.browser.id };
    await this.#deps.connections.putTimelineEvent(running.projectId, running.connectionId, timelineEvent(flow, record));
  }

  /** Tells whoever follows connection `connectionId` that its record changed. */
  changed(connectionId: string): void {
    for (const listener of this.#listeners.get(connectionId) ?? []) listener();
  }

  async #profileOf(projectId: string, name: string): Promise<{ id: string; name: string | null }> {
    const found = await this.#deps.profiles.get(projectId, name);
    if (found !== undefined && found.name === name) return found;
    const created = newProfile(name);
    try {
      await this.#deps.profiles.insert(projectId, created);
      return created;
    } catch (error) {
      // Made meanwhile by another request: that one is the profile.
      const again = error instanceof NameConflictError ? await this.#deps.profiles.get(projectId, name) : undefined;
      if (again === undefined) throw error;
      return again;
    }
  }

  async #storedValues(projectId: string, record: ManagedAuth): Promise<StoredValues> {
    const name = record.credential?.name;
    const row = name === undefined ? undefined : await this.#deps.credentials.get(projectId, name);
    if (row === undefined || row.name !== name) return {};
    const values = this.#deps.seals.openValues(row);
    return {
      identifier: values.username ?? values.email ?? values.identifier ?? values.login,
      password: values.password,
      totp: this.#deps.seals.openTotp(row),
      ssoProvider: row.sso_provider ?? undefined,
      domain: row.domain,
    };
  }

  /** Stores what a person typed (never a one-time code) in the connection's credential, made when it has none. */
  async #saveCredential(projectId: string, record: ManagedAuth, learned: LearnedValues): Promise<CredentialRow | undefined> {
    if (!record.save_credentials) return undefined;
    const values: Record<string, string> = {};
    if (learned.identifier !== undefined) values.username = learned.identifier;
    if (learned.password !== undefined) values.password = learned.password;
    if (Object.keys(values).length === 0) return undefined;
    const { credentials, seals } = this.#deps;
    const name = record.credential?.name;
    const existing = name === undefined ? undefined : await credentials.get(projectId, name);
    if (existing !== undefined && existing.name === name) {
      return credentials.update(projectId, existing.id, (current) => ({
        ...current,
        value_keys: [...new Set([...current.value_keys, ...Object.keys(values)])].sort(),
        values_sealed: seals.sealValues(current, { ...seals.openValues(current), ...values }),
        updated_at: new Date().toISOString(),
      }));
    }
    const now = new Date().toISOString();
    const owner = { id: newId("credential"), project_id: projectId, domain: record.domain };
    const row: CredentialRow = {
      ...owner,
      name: `${record.profile_name}-${record.domain}`.slice(0, 255),
      sso_provider: null,
      value_keys: Object.keys(values).sort(),
      values_sealed: seals.sealValues(owner, values),
      totp_sealed: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await credentials.insert(row);
    } catch (error) {
      if (!(error instanceof NameConflictError)) throw error;
      row.name = `auth-${record.id}`.slice(0, 255);
      await credentials.insert(row);
    }
    return row;
  }
}

/** The record's `mfa_options[].type` for a choice's `mfa_type`: the kinds the record has no word for are a switch of method. */
function mfaOptionType(type: ManagedAuthChoice["mfa_type"]): MFAOption["type"] {
  return type === undefined || type === null ? "sms" : type === "passkey" || type === "other" ? "switch" : type;
}

/** A flow's event in its connection's timeline, as the record now reads. */
function timelineEvent(
  flow: { flowId: string; type: "LOGIN" | "REAUTH"; startedAt: string; browserId: string | undefined },
  record: ManagedAuth,
): ManagedAuthTimelineEvent {
  return {
    id: flow.flowId,
    type: flow.type === "LOGIN" ? "login" : "reauth",
    status: record.flow_status ?? "IN_PROGRESS",
    timestamp: flow.startedAt,
    updated_at: new Date().toISOString(),
    ...(flow.browserId === undefined ? {} : { browser_session_id: flow.browserId }),
    ...(record.flow_step == null ? {} : { step: record.flow_step }),
    ...(record.error_code == null ? {} : { error_code: record.error_code }),
    ...(record.error_message == null ? {} : { error_message: record.error_message }),
    ...(record.website_error == null ? {} : { website_error: record.website_error }),
  };
}

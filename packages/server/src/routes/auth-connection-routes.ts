import { limits, type ManagedAuth, type ManagedAuthTimelineEvent } from "@browser-service/types";
import type { FastifyInstance } from "fastify";
import type { AuthConnectionRow } from "../auth-connections/auth-connection-store.js";
import { connectionAt } from "../auth-connections/flow-expiry.js";
import { normalizeAllowedDomain, normalizeDomain } from "../credentials/domain-names.js";
import { CredentialNotFoundError, NoFlowError, NotFoundError } from "../http/api-errors.js";
import { openEventStream } from "../http/event-stream.js";
import { parseJsonBody } from "../http/json-body.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import { type BodyOf, checkedBody } from "../http/request-validation.js";
import { reauthOf, withCheckReason } from "../managed-auth/can-reauth.js";
import type { PeerCall } from "../nodes/peer-calls.js";
import { newProfile } from "../profiles/profile-store.js";
import { newId } from "../storage/ids.js";
import type { ApiDeps } from "./api-deps.js";
import { peerCallBrowser } from "./browser-placement.js";
import { FLOW_CONNECTION_HEADER, forwardToFlow } from "./flow-placement.js";
import { loginFlowUrls } from "./hosted-login-routes.js";

/** A flow status after which a flow moves no more. */
const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);
/** How often a follower reads the record again (a flow on another node tells this one nothing). */
const FOLLOW_POLL_MS = 1_000;
const HEARTBEAT_MS = 15_000;

/** The spec's `managed_auth_state` event of a record: its flow's state, without empty fields. */
function stateEvent(record: ManagedAuth): Record<string, unknown> {
  const event: Record<string, unknown> = { event: "managed_auth_state", flow_status: record.flow_status, flow_step: record.flow_step };
  for (const key of [
    "flow_type",
    "fields",
    "choices",
    "discovered_fields",
    "mfa_options",
    "pending_sso_buttons",
    "sign_in_options",
    "hosted_url",
    "live_view_url",
    "external_action_message",
    "error_code",
    "error_message",
    "website_error",
    "post_login_url",
  ] as const) {
    const value = record[key];
    if (value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0)) event[key] = value;
  }
  return event;
}

/** `/auth/connections`: managed auth connections, their login flows, events and timeline. */
export function registerAuthConnectionRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores, loginFlows, browserUrls } = deps;
  const connections = stores.authConnections;

  const credentialChecked = async (projectId: string, credential: { name: string } | undefined) => {
    if (credential === undefined) return undefined;
    const row = await stores.credentials.get(projectId, credential.name);
    if (row === undefined || row.name !== credential.name) {
      throw new CredentialNotFoundError(`No credential of this project is named ${JSON.stringify(credential.name)}.`);
    }
    return row;
  };

  app.post<{ Body: BodyOf<"createAuthConnection"> }>("/auth/connections", { config: { operationId: "createAuthConnection" } }, async (request, reply) => {
    const body = request.body;
    const projectId = (await request.scope.project()).id;
    const credential = await credentialChecked(projectId, body.credential);
    const record: ManagedAuth = {
      id: newId("authConnection"),
      profile_name: body.profile_name,
      domain: normalizeDomain(body.domain),
      status: "NEEDS_AUTH",
      save_credentials: body.save_credentials ?? true,
      record_session: body.record_session ?? false,
      allowed_domains: [...new Set((body.allowed_domains ?? []).map(normalizeAllowedDomain))],
      auto_reauth: body.auto_reauth ?? true,
      health_checks: body.health_checks ?? true,
      health_check_interval: body.health_check_interval ?? 3600,
      ...(body.login_url === undefined ? {} : { login_url: body.login_url }),
      ...(body.credential === undefined ? {} : { credential: { name: body.credential.name } }),
      flow_status: null,
    };
    const row: AuthConnectionRow = { projectId, record: withCheckReason({ ...record, ...reauthOf(record, {}, credential) }), internals: {} };
    await connections.insert(row);
    // The SDK's promise: a profile that does not exist yet is made.
    if ((await stores.profiles.get(projectId, body.profile_name))?.name !== body.profile_name) {
      await stores.profiles.insert(projectId, newProfile(body.profile_name)).catch(() => undefined);
    }
    return reply.code(201).send(row.record);
  });

  app.get("/auth/connections", { config: { operationId: "listAuthConnections" } }, async (request, reply) => {
    const query = request.query as { offset?: number; limit?: number; domain?: string; profile_name?: string; query?: string };
    const { offset, limit } = pageOf(query);
    const page = await connections.list((await request.scope.project()).id, {
      offset,
      limit,
      domain: query.domain === undefined ? undefined : normalizeDomain(query.domain),
      profileName: query.profile_name,
      query: query.query,
    });
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    return page.items;
  });

  app.get<{ Params: { id: string } }>(
    "/auth/connections/:id",
    { config: { operationId: "getAuthConnection" } },
    async (request) => await connections.get((await request.scope.project()).id, request.params.id),
  );

  app.patch<{ Params: { id: string }; Body: BodyOf<"updateAuthConnection"> }>(
    "/auth/connections/:id",
    { config: { operationId: "updateAuthConnection" } },
    async (request) => {
      const body = request.body;
      const projectId = (await request.scope.project()).id;
      const credential = await credentialChecked(projectId, body.credential);
      const updated = await connections.update(projectId, request.params.id, (current) => {
        const record: ManagedAuth = { ...current.record };
        if (body.allowed_domains !== undefined) record.allowed_domains = [...new Set(body.allowed_domains.map(normalizeAllowedDomain))];
        if (body.auto_reauth !== undefined) record.auto_reauth = body.auto_reauth;
        if (body.health_checks !== undefined) record.health_checks = body.health_checks;
        if (body.health_check_interval !== undefined) record.health_check_interval = body.health_check_interval;
        if (body.record_session !== undefined) record.record_session = body.record_session;
        if (body.save_credentials !== undefined) record.save_credentials = body.save_credentials;
        if (body.credential !== undefined) record.credential = { name: body.credential.name };
        if (body.login_url === "") delete record.login_url;
        else if (body.login_url !== undefined) record.login_url = body.login_url;
        // A new interval or checks turned on: the health checks schedule the next check from now.
        const rescheduled = body.health_check_interval !== undefined || body.health_checks !== undefined;
        const { nextCheckAt: _, ...kept } = current.internals;
        return {
          ...current,
          internals: rescheduled ? kept : current.internals,
          record: withCheckReason({ ...record, ...reauthOf(record, current.internals, credential) }),
        };
      });
      if (updated === undefined) throw new NotFoundError(`No auth connection has the id "${request.params.id}" in this project.`);
      return connectionAt(updated.record, Date.now());
    },
  );

  const deleteConnection = async (projectId: string, connectionId: string) => {
    if ((await connections.find(projectId, connectionId)) === undefined) {
      throw new NotFoundError(`No auth connection has the id "${connectionId}" in this project.`);
    }
    await loginFlows.cancel(connectionId);
    await connections.delete(projectId, connectionId);
  };
  app.delete<{ Params: { id: string } }>("/auth/connections/:id", { config: { operationId: "deleteAuthConnection" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    // The flow's node cancels it and ends its browser at once, rather than at its expiry.
    if (await forwardToFlow(deps, request, reply, projectId, request.params.id)) return reply;
    await deleteConnection(projectId, request.params.id);
    return reply.code(204).send();
  });

  app.post<{ Params: { id: string } }>("/auth/connections/:id/login", { config: { operationId: "loginAuthConnection" } }, async (request) => {
    const project = await request.scope.project();
    return loginFlows.start(project, request.params.id, "LOGIN", loginFlowUrls(browserUrls, request.headers));
  });

  app.post<{ Params: { id: string }; Body: BodyOf<"submitAuthConnection"> }>(
    "/auth/connections/:id/submit",
    { bodyLimit: limits.schemas.ManagedAuthSubmitRequest.maxBytes, config: { operationId: "submitAuthConnection" } },
    async (request, reply) => {
      const projectId = (await request.scope.project()).id;
      if (await forwardToFlow(deps, request, reply, projectId, request.params.id)) return reply;
      await loginFlows.submit(projectId, request.params.id, request.body);
      return { accepted: true };
    },
  );

  app.get<{ Params: { id: string } }>("/auth/connections/:id/timeline", { config: { operationId: "listAuthConnectionTimeline" } }, async (request, reply) => {
    const query = request.query as { offset?: number; limit?: number; type?: ManagedAuthTimelineEvent["type"] };
    const projectId = (await request.scope.project()).id;
    await connections.get(projectId, request.params.id);
    const { offset, limit } = pageOf(query);
    const page = await connections.timeline(projectId, request.params.id, { offset, limit, type: query.type });
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    return page.items;
  });

  app.get<{ Params: { id: string } }>("/auth/connections/:id/events", { config: { operationId: "followAuthConnection" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const id = request.params.id;
    const first = await connections.get(projectId, id);
    if (first.flow_status == null) throw new NoFlowError("This connection never started a login flow; POST .../login starts one.");
    const raw = openEventStream(request, reply);
    let last = "";
    let done = false;
    let reading = Promise.resolve();
    const send = (event: Record<string, unknown>) => raw.write(`data: ${JSON.stringify({ ...event, timestamp: new Date().toISOString() })}\n\n`);
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearInterval(heartbeat);
      unsubscribe();
      raw.end();
    };
    const show = (record: ManagedAuth) => {
      const event = stateEvent(record);
      const text = JSON.stringify(event);
      if (text !== last) {
        last = text;
        send(event);
      }
      if (TERMINAL.has(String(record.flow_status))) finish();
    };
    // One read at a time, in order: a change and a poll tick never race to write.
    const readAgain = () => {
      reading = reading
        .then(async () => {
          if (done) return;
          show(await connections.get(projectId, id));
        })
        .catch((error: unknown) => {
          if (done) return;
          const gone = error instanceof NotFoundError;
          send({
            event: "error",
            error: gone
              ? { code: "not_found", message: "The connection was deleted." }
              : { code: "internal_error", message: "The connection could not be read." },
          });
          if (!gone) request.log.error({ err: error }, "could not read a followed auth connection");
          finish();
        });
    };
    const unsubscribe = loginFlows.onChange(id, readAgain);
    const poll = setInterval(readAgain, FOLLOW_POLL_MS);
    const heartbeat = setInterval(() => send({ event: "sse_heartbeat" }), HEARTBEAT_MS);
    raw.on("close", finish);
    show(first);
  });

  // Another node's submit or delete of a flow this node runs, named by the flow's browser.
  const calls = deps.peerCalls;
  if (calls === undefined || deps.cluster === undefined) return;
  const nodeId = deps.cluster.nodeId;
  // The connection the forwarding node named, in the project of the flow's browser it read:
  // judged here as a direct request is, so a flow that ended meanwhile answers as it would.
  const flowOfCall = (call: PeerCall) => {
    const browser = peerCallBrowser(call, nodeId);
    const connectionId = call.headers[FLOW_CONNECTION_HEADER];
    if (connectionId === undefined) throw new NotFoundError("The forwarded call names no auth connection.");
    return { projectId: browser.project_id, connectionId };
  };
  calls.handle("submitAuthConnection", async (call) => {
    const { projectId, connectionId } = flowOfCall(call);
    // The forwarding node checked the body already; checked again here, where it is used, as a direct request's is.
    await loginFlows.submit(projectId, connectionId, checkedBody("submitAuthConnection", parseJsonBody(call.body.toString("utf8"))));
    return { status: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify({ accepted: true }) };
  });
  calls.handle("deleteAuthConnection", async (call) => {
    const { projectId, connectionId } = flowOfCall(call);
    await deleteConnection(projectId, connectionId);
    return { status: 204, headers: {} };
  });
}

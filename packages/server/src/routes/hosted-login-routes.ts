import type { IncomingHttpHeaders } from "node:http";
import { limits, type ManagedAuth } from "@browser-service/types";
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { connectionAt } from "../auth-connections/flow-expiry.js";
import type { BrowserUrls } from "../cdp/public-url.js";
import { BadRequestError, UnauthorizedError } from "../http/api-errors.js";
import { buildInlinePage } from "../http/inline-page.js";
import type { RateLimits } from "../http/rate-limiter.js";
import { type BodyOf, bodyProblems } from "../http/request-validation.js";
import { HOSTED_SECRET_MAX_CHARS, type HostedAccess } from "../managed-auth/hosted-access.js";
import type { FlowUrls, LoginFlows } from "../managed-auth/login-flows.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The hosted login page's grant and its connection, once its token was checked. */
    hostedGrant?: HostedAccessGranted;
  }
}

/** Where the hosted login page is served; a flow's `hosted_url` is this path with `#code=…`. */
export const HOSTED_LOGIN_PATH = "/auth/hosted";

/** The URLs a login flow shows, on the address a request with `headers` reached (none: the server's own). */
export function loginFlowUrls(browserUrls: BrowserUrls, headers: IncomingHttpHeaders): FlowUrls {
  return {
    liveView: (browserId, token, watchOnly) => {
      const set = browserUrls.forBrowser(headers, browserId, token);
      return watchOnly ? set.live_view_read_only_url : set.live_view_url;
    },
    hosted: (code) => `${browserUrls.forPage(headers)}${HOSTED_LOGIN_PATH}#code=${code}`,
  };
}

const ASSETS = new URL("../../assets/hosted-login/", import.meta.url);
/** The code's JSON body: `{"code": "<43 characters>"}` and room to spare. */
const EXCHANGE_BODY_BYTES = 1024;
const SCHEME = new RegExp(`^Bearer ([A-Za-z0-9_.-]{16,${HOSTED_SECRET_MAX_CHARS}})$`);

/** What a checked token gives a request: its grant and its connection as stored. */
type HostedAccessGranted = NonNullable<Awaited<ReturnType<HostedAccess["grantOf"]>>>;

/** What the hosted login page needs from the rest of the server. */
export interface HostedLoginDeps {
  hosted: HostedAccess;
  /** Failed codes and tokens count against the client's failed-authentication limit, as bad API keys do. */
  rateLimits: RateLimits;
  loginFlows: LoginFlows;
  /** Sends a submit to the node whose flow waits for it, if that is another node (`true`: sent and answered). */
  forwardSubmit: (request: FastifyRequest, reply: FastifyReply, projectId: string, connectionId: string) => Promise<boolean>;
}

/**
 * The page a person opens from a flow's `hosted_url` to finish a login the service
 * cannot: `GET /auth/hosted` (the page, outside the API: no key), `POST
 * /auth/hosted/session` (its single-use code for a token), `GET /auth/hosted/state` (the
 * flow as the page shows it) and `POST /auth/hosted/submit` (a `ManagedAuthSubmitRequest`,
 * checked as `POST /auth/connections/{id}/submit` checks it). The token reaches that one
 * connection's current flow and nothing else, and only until the flow's time is over.
 */
export function registerHostedLoginRoutes(app: FastifyInstance, deps: HostedLoginDeps): void {
  const page = buildInlinePage(ASSETS, { style: "hosted.css", script: "hosted.js" }, [
    "connect-src 'self'",
    // The browser's live view, for a step a person does in the page itself (a CAPTCHA, an approval).
    "frame-src 'self'",
  ]);

  app.get(HOSTED_LOGIN_PATH, { config: { page: true } }, async (_request, reply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", `${page.contentSecurityPolicy}; frame-ancestors 'none'`)
      .header("cache-control", "no-store")
      .header("referrer-policy", "no-referrer")
      .header("x-content-type-options", "nosniff")
      .send(page.html),
  );

  // Before any body is read: a blocked client, or a request without a live token, costs a
  // map lookup, never the parsing of a large body.
  const blockedClient: onRequestHookHandler = (request, _reply, done) => done(deps.rateLimits.checkClient(deps.rateLimits.clientKey(request.raw)));
  const withToken: onRequestHookHandler = async (request) => {
    request.hostedGrant = await grantOf(deps, request);
  };
  // The page's own calls: like the page, outside the spec (their errors are the spec's Error).
  app.post(`${HOSTED_LOGIN_PATH}/session`, { bodyLimit: EXCHANGE_BODY_BYTES, config: { page: true }, onRequest: blockedClient }, async (request, reply) => {
    const code = (request.body as { code?: unknown } | undefined)?.code;
    if (typeof code !== "string" || code.length === 0 || code.length > HOSTED_SECRET_MAX_CHARS)
      throw new BadRequestError('The body is {"code": "<the code from the hosted_url>"}.');
    const exchanged = await deps.hosted.exchange(code);
    if (exchanged === undefined) {
      deps.rateLimits.recordFailedAuth(deps.rateLimits.clientKey(request.raw));
      throw new UnauthorizedError("This login link was already used, has ended, or was never issued; ask for a new one.");
    }
    return reply.header("cache-control", "no-store").send({
      token: exchanged.token,
      connection_id: exchanged.grant.connectionId,
      expires_at: new Date(exchanged.grant.expiresAt).toISOString(),
    });
  });

  app.get(`${HOSTED_LOGIN_PATH}/state`, { config: { page: true }, onRequest: withToken }, async (request, reply) => {
    const { row } = request.hostedGrant as HostedAccessGranted;
    return reply.header("cache-control", "no-store").send(pageView(connectionAt(row.record, Date.now())));
  });

  app.post(
    `${HOSTED_LOGIN_PATH}/submit`,
    { bodyLimit: limits.schemas.ManagedAuthSubmitRequest.maxBytes, config: { page: true }, onRequest: withToken },
    async (request, reply) => {
      const { grant } = request.hostedGrant as HostedAccessGranted;
      const problems = bodyProblems("submitAuthConnection", request.body);
      if (problems.length > 0) throw new BadRequestError("The submission does not match ManagedAuthSubmitRequest.", problems);
      const body = request.body as BodyOf<"submitAuthConnection">;
      // A flow another node runs waits there: the submit goes there, as an API submit does.
      if (await deps.forwardSubmit(request, reply, grant.projectId, grant.connectionId)) return reply;
      await deps.loginFlows.submit(grant.projectId, grant.connectionId, body);
      return reply.send({ accepted: true });
    },
  );
}

async function grantOf(deps: HostedLoginDeps, request: FastifyRequest): Promise<HostedAccessGranted> {
  const client = deps.rateLimits.clientKey(request.raw);
  const blocked = deps.rateLimits.checkClient(client);
  if (blocked) throw blocked;
  const token = SCHEME.exec(request.headers.authorization ?? "")?.[1];
  const granted = token === undefined ? undefined : await deps.hosted.grantOf(token);
  if (granted === undefined) {
    deps.rateLimits.recordFailedAuth(client);
    throw new UnauthorizedError("This login page's access has ended, or its login was replaced or removed; open a new link.");
  }
  return granted;
}

/** What the page shows: the flow, never the credential or the connection's settings. */
function pageView(record: ManagedAuth) {
  return {
    domain: record.domain,
    flow_status: record.flow_status ?? null,
    flow_step: record.flow_step ?? null,
    flow_expires_at: record.flow_expires_at ?? null,
    interaction_id: record.interaction_id ?? null,
    fields: record.fields ?? [],
    choices: record.choices ?? [],
    external_action_message: record.external_action_message ?? null,
    website_error: record.website_error ?? null,
    error_message: record.error_message ?? null,
    live_view_url: record.live_view_url ?? null,
  };
}

import { limits, type WebMcpInvocationResult, type WebMcpInvokeRequest } from "@browser-service/types";
import type { FastifyInstance } from "fastify";
import type { BrowserRow } from "../browsers/browser-store.js";
import { ApiError, OutcomeUnknownError, PayloadTooLargeError } from "../http/api-errors.js";
import { parseJsonBody } from "../http/json-body.js";
import { type BodyOf, checkedBody, invalidRequest } from "../http/request-validation.js";
import type { ToolListNotModified } from "../webmcp/browser-webmcp.js";
import { inputProblems } from "../webmcp/input-rules.js";
import type { ToolListBody } from "../webmcp/tool-list-body.js";
import type { ApiDeps } from "./api-deps.js";
import { browserOfRequest, forwardToOwner, invocationLost, ownerUnreachable, peerCallBrowser } from "./browser-placement.js";

// The spec's rules of the invoke body (the raw body's own cap is the server's bodyLimit):
// the largest serialized `input`, and the wait when `timeout_sec` is left out.
const MAX_INPUT_BYTES = limits.schemas.WebMcpInvokeRequest.input.maxBytes;
const DEFAULT_TIMEOUT_SEC = limits.schemas.WebMcpInvokeRequest.timeout_sec.default;
const JSON_TYPE = "application/json; charset=utf-8";

/** A rule of the body, checked before the browser is looked up; and before serializing, which a deep input would overflow. */
function checkInput(body: WebMcpInvokeRequest): void {
  const problems = inputProblems(body.input);
  if (problems.length > 0) throw invalidRequest(problems);
}

/**
 * `/browsers/{id_or_name}/webmcp/*`: the browser-wide tool snapshot and invocation.
 * Unknown browsers are 404 `not_found`, crashed ones 409 `conflict`. A browser of another
 * node is served there: the same operations below answer its node's peer calls.
 */
export function registerWebMcpRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { webmcp, browsers } = deps;

  // Each is activity on the browser (its inactivity timeout starts again); an invocation holds it active while it runs.
  const listTools = (row: BrowserRow, ifNoneMatch: string | undefined): Promise<ToolListBody | ToolListNotModified> => {
    browsers.touch(row.id);
    return webmcp.of(row).listTools(ifNoneMatch);
  };

  const invoke = async (row: BrowserRow, body: WebMcpInvokeRequest, callerGone: AbortSignal): Promise<WebMcpInvocationResult> => {
    const inputBytes = Buffer.byteLength(JSON.stringify(body.input));
    if (inputBytes > MAX_INPUT_BYTES) throw new PayloadTooLargeError(`The serialized input is ${inputBytes} bytes; the limit is ${MAX_INPUT_BYTES}.`);
    const release = browsers.hold(row.id);
    try {
      const result = await webmcp.of(row).invoke(body.tool_ref, body.input, body.timeout_sec ?? DEFAULT_TIMEOUT_SEC, callerGone);
      deps.observeInvocation?.(result.status);
      return result;
    } catch (error) {
      deps.observeInvocation?.(
        error instanceof OutcomeUnknownError ? "outcome_unknown" : error instanceof ApiError && error.status < 500 ? "refused" : "failed",
      );
      throw error;
    } finally {
      release();
    }
  };

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name/webmcp/tools", { config: { operationId: "listWebMcpTools" } }, async (request, reply) => {
    const project = await request.scope.project();
    const row = await browserOfRequest(deps, request, project);
    if (await forwardToOwner(deps, request, reply, row, ownerUnreachable(row))) return reply;
    // Already JSON: the registry serializes each tool once, when the page registers it.
    const { json, etag } = await listTools(row, request.headers["if-none-match"]);
    reply.header("etag", etag);
    // A poller that has this snapshot gets no body (If-None-Match, RFC 9110 13.1.2).
    if (json === undefined) return reply.code(304).send();
    return reply.type(JSON_TYPE).send(json);
  });

  app.post<{ Params: { id_or_name: string }; Body: BodyOf<"invokeWebMcpTool"> }>(
    "/browsers/:id_or_name/webmcp/invoke",
    { config: { operationId: "invokeWebMcpTool" } },
    async (request, reply) => {
      const body = request.body;
      checkInput(body);
      const project = await request.scope.project();
      const row = await browserOfRequest(deps, request, project);
      if (await forwardToOwner(deps, request, reply, row, ownerUnreachable(row), { leaveOnHalfClose: true, lost: invocationLost(row) })) return reply;
      // A caller that disconnects no longer waits: the invocation is then cancelled in the
      // browser. The server lets clients half-close (app/server.ts), so a caller's FIN, which
      // is how most clients leave, counts as leaving too.
      const callerGone = new AbortController();
      const socket = request.raw.socket;
      const gone = () => {
        if (!reply.raw.writableFinished) callerGone.abort();
      };
      reply.raw.once("close", gone);
      if (socket.readableEnded) gone();
      else {
        socket.once("end", gone);
        reply.raw.once("close", () => socket.off("end", gone));
      }
      return invoke(row, body, callerGone.signal);
    },
  );

  const calls = deps.peerCalls;
  if (calls === undefined || deps.cluster === undefined) return;
  const nodeId = deps.cluster.nodeId;
  calls.handle("listWebMcpTools", async (call) => {
    const { json, etag } = await listTools(peerCallBrowser(call, nodeId), call.headers["if-none-match"]);
    return json === undefined ? { status: 304, headers: { etag } } : { status: 200, headers: { etag, "content-type": JSON_TYPE }, body: json };
  });
  calls.handle("invokeWebMcpTool", async (call) => {
    // The forwarding node checked it already; checked again here, where it runs, as a direct request's is.
    const body = checkedBody("invokeWebMcpTool", parseJsonBody(call.body.toString("utf8")));
    checkInput(body);
    const result = await invoke(peerCallBrowser(call, nodeId), body, call.signal);
    return { status: 200, headers: { "content-type": JSON_TYPE }, body: JSON.stringify(result) };
  });
}

import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CreateBrowserInput } from "../browsers/browser-service.js";
import { type BrowserExtension, type BrowserRow, toBrowser } from "../browsers/browser-store.js";
import { resolveExtensionRefs } from "../extensions/extension-refs.js";
import { NotFoundError, ProfileLoadFailedError, ProfileNotFoundError } from "../http/api-errors.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import type { BodyOf } from "../http/request-validation.js";
import { PeerDeclinedError, PeerUnreachableError } from "../nodes/peer-forwarder.js";
import { resolveTelemetry } from "../telemetry/telemetry-settings.js";
import type { ApiDeps } from "./api-deps.js";
import { browserOfRequest, deleteUnreachable, forwardToOwner, peerCallBrowser, resolvedScopeClaim } from "./browser-placement.js";

// The peer calls that read a browser's DevTools token from its node (tokens live only in
// their node's memory): for a list, and for a read of that one browser, which is activity on it.
const BROWSER_TOKEN_OP = "browserToken";
const BROWSER_READ_OP = "browserRead";

/** A placed create's answer from a node that drains (503 `node_draining`): it started nothing, and another node takes it. */
function drainingAnswer(status: number, body: Buffer): string | undefined {
  if (status !== 503) return undefined;
  try {
    return (JSON.parse(body.toString("utf8")) as { code?: unknown }).code === "node_draining" ? "it drains" : undefined;
  } catch {
    return undefined;
  }
}

/** `/browsers` and `/browsers/{id_or_name}`: the minimal browser operations. */
export function registerBrowserRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores, browsers, browserUrls, cluster } = deps;
  // `cdp_ws_url` names the host this request reached, and carries the token while the browser
  // runs (another node's browsers' tokens come from their node: see `tokens` below).
  // Its extensions are read here, where a Browser is shown, once per page of them.
  const show = (request: FastifyRequest, row: BrowserRow, extensions: Map<string, BrowserExtension[]>, tokens?: Map<string, string>) =>
    toBrowser(row, browserUrls.forBrowser(request.headers, row.id, browsers.token(row.id) ?? tokens?.get(row.id)), extensions.get(row.id) ?? []);
  const showOne = async (request: FastifyRequest, row: BrowserRow) => show(request, row, await stores.browsers.extensionsOf([row.id]));
  /**
   * `rows` with the tokens of the running browsers of other nodes among them, each asked of
   * its node on the nodes' channel. A browser whose node does not answer, or no longer runs
   * it, is shown without its token (its API key still opens it), and as it is read again
   * then: its node may have been found dead while it was asked.
   */
  const withTokens = async (
    request: FastifyRequest,
    rows: readonly BrowserRow[],
    op: typeof BROWSER_TOKEN_OP | typeof BROWSER_READ_OP = BROWSER_TOKEN_OP,
  ): Promise<{ rows: BrowserRow[]; tokens: Map<string, string> }> => {
    const tokens = new Map<string, string>();
    const forwarder = cluster?.forwarder;
    if (cluster === undefined || forwarder === undefined) return { rows: [...rows], tokens };
    const current = await Promise.all(
      rows.map(async (row) => {
        const where = row.status === "running" ? cluster.locate(row.node_id) : "self";
        if (typeof where !== "object") return row;
        try {
          const answer = await forwarder.ask(where, String(request.id), op, row);
          const token = answer.status === 200 ? (JSON.parse(String(answer.body)) as { token?: unknown }).token : undefined;
          if (typeof token === "string") {
            tokens.set(row.id, token);
            return row;
          }
        } catch (error) {
          request.log.warn({ err: error, browser: row.id, node: row.node_id }, "could not read the DevTools token of another node's browser");
        }
        // Deleted meanwhile: shown as it was read, as a list read a moment earlier would.
        return (await stores.browsers.findLaunched(row.id)) ?? row;
      }),
    );
    return { rows: current, tokens };
  };

  app.post<{ Body: BodyOf<"createBrowser"> | undefined }>("/browsers", { config: { operationId: "createBrowser" } }, async (request, reply) => {
    const body = request.body ?? {};
    const project = await request.scope.project();
    // A create is started where there is room (see Cluster.place), unless another node
    // already chose this one for it (its proof says so).
    const sender = cluster?.verifiedPeer(request.raw);
    const placedHere = sender?.placed !== undefined && sender.placed === cluster?.nodeId;
    const target = cluster === undefined || placedHere ? "self" : cluster.place();
    if (target !== "self" && cluster?.forwarder !== undefined) {
      try {
        await cluster.forwarder.forward(request, reply, target, deps.rateLimits.clientKey(request.raw), {
          path: "/browsers",
          claims: { placed: target.nodeId, placedLease: target.leaseId, scope: resolvedScopeClaim(request, project) },
          declined: drainingAnswer,
        });
        return reply;
      } catch (error) {
        // Nothing was started there: it is started here instead.
        if (error instanceof PeerDeclinedError) {
          // It drains since this node last read the table: no more creates go there.
          cluster.noteDraining(target.nodeId);
          request.log.info({ node: target.nodeId }, "the node chosen for a create drains; starting the browser here");
        } else if (error instanceof PeerUnreachableError) {
          request.log.warn({ err: error, node: target.nodeId }, "the node chosen for a create did not answer; starting the browser here");
        } else throw error;
      }
    }
    const input: CreateBrowserInput = {};
    if (placedHere) {
      // Its sender starts the browser elsewhere once this node's lease lapses (it froze, say):
      // the reservation checks that the lease it was sent under still holds, or none is kept here.
      input.placedUnder = sender?.placedLease ?? "";
    }
    if (body.name !== undefined) input.name = body.name;
    if (body.start_url !== undefined) input.start_url = body.start_url;
    if (body.timeout_seconds !== undefined) input.timeoutSeconds = body.timeout_seconds;
    const telemetry = resolveTelemetry(body.telemetry, deps.telemetry?.destinationNames() ?? []);
    if (telemetry !== null) input.telemetry = telemetry;
    if (body.extensions !== undefined) {
      const uses = await resolveExtensionRefs(stores.extensions, project.id, body.extensions);
      input.extensions = await Promise.all(uses.map(async (use) => ({ ...use, archivePath: await stores.extensions.archivePath(use.id) })));
    }
    if (body.profile !== undefined) {
      const ref = body.profile;
      const [by, value] = "id" in ref ? (["id", ref.id] as const) : (["name", ref.name] as const);
      const profile = await stores.profiles.get(project.id, value);
      if (profile === undefined || (by === "id" ? profile.id : profile.name) !== value) {
        throw new ProfileNotFoundError(`No profile of this project has the ${by} ${JSON.stringify(value)}.`);
      }
      const state = await deps.profileStates.load(project.id, profile.id).catch((error: unknown) => {
        throw new ProfileLoadFailedError("The profile's saved state could not be read; no browser was started.", error);
      });
      input.profile = { id: profile.id, name: profile.name, save: ref.save_changes === true, state };
    }
    return reply.code(201).send(await showOne(request, await browsers.create(project, input)));
  });

  app.get("/browsers", { config: { operationId: "listBrowsers" } }, async (request, reply) => {
    const { offset, limit } = pageOf(request.query as { offset?: number; limit?: number });
    const page = await stores.browsers.list((await request.scope.project()).id, offset, limit);
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    const [extensions, current] = await Promise.all([stores.browsers.extensionsOf(page.items.map((row) => row.id)), withTokens(request, page.items)]);
    return current.rows.map((row) => show(request, row, extensions, current.tokens));
  });

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "getBrowser" } }, async (request) => {
    const row = await stores.browsers.getByIdOrName((await request.scope.project()).id, request.params.id_or_name);
    // A read of the browser is activity on it: here, or on its node when it asks for the token.
    browsers.touch(row.id);
    const current = await withTokens(request, [row], BROWSER_READ_OP);
    return show(request, current.rows[0] ?? row, await stores.browsers.extensionsOf([row.id]), current.tokens);
  });

  app.delete<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "deleteBrowser" } }, async (request, reply) => {
    const project = await request.scope.project();
    const row = await browserOfRequest(deps, request, project);
    if (await forwardToOwner(deps, request, reply, row, deleteUnreachable(row))) return reply;
    await browsers.delete(row);
    return reply.code(204).send();
  });

  // Other nodes' calls about this node's browsers: a token (only this node holds it), and the same stop as a delete.
  const nodeId = cluster?.nodeId;
  if (deps.peerCalls === undefined || nodeId === undefined) return;
  const tokenOf = (id: string) => {
    const token = browsers.token(id);
    if (token === undefined) throw new NotFoundError("This node runs no such browser now.");
    return { status: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify({ token }) };
  };
  deps.peerCalls.handle(BROWSER_TOKEN_OP, async (call) => tokenOf(peerCallBrowser(call, nodeId).id));
  deps.peerCalls.handle(BROWSER_READ_OP, async (call) => {
    const { id } = peerCallBrowser(call, nodeId);
    browsers.touch(id);
    return tokenOf(id);
  });
  deps.peerCalls.handle("deleteBrowser", async (call) => {
    // Read again, as a stop is rare and final: a row that is no more is 404, as for a direct delete.
    const claimed = peerCallBrowser(call, nodeId);
    await browsers.delete(await stores.browsers.getByIdOrName(claimed.project_id, claimed.id));
    return { status: 204, headers: {} };
  });
}

import type { FastifyInstance, preValidationHookHandler } from "fastify";
import { NotReadyError } from "../http/api-errors.js";
import { validateRequest } from "../http/request-validation.js";

/** How long `GET /readyz` waits for the database before it counts it as not answering. */
const DATABASE_ANSWER_MS = 2_000;
const DRAINING = "the server is draining: it is shutting down, serves its browsers until they end and takes no new ones";
// What an unauthenticated caller is told; the details (a path, the host's memory) go to the log.
const BROWSERS_UNAVAILABLE = "browsers cannot start on this host (the server's log says why)";
const MEMORY_LOW = "the host's available memory is below the floor the server keeps";

/** What the probes ask of the rest of the server. */
export interface HealthDeps {
  /** Whether the server is shutting down (it takes no new browsers). */
  draining: () => boolean;
  /** A read of the database; it answers, or fails, or takes too long. */
  readDatabase: () => Promise<unknown>;
  /** Why browsers cannot start on this host, or `undefined`. */
  browsersUnavailable: () => Promise<string | undefined>;
  /** Why the host's memory refuses new browsers now, or `undefined`. */
  memoryLow: () => string | undefined;
}

/** Why the database does not answer within {@link DATABASE_ANSWER_MS}, or `undefined`. */
async function databaseProblem(read: () => Promise<unknown>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the database did not answer within ${DATABASE_ANSWER_MS / 1000} s`), DATABASE_ANSWER_MS);
  });
  try {
    return await Promise.race([read().then(() => undefined), late]);
  } catch {
    return "the database does not answer";
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The probes of load balancers and orchestrators, outside the key-checked API (they carry
 * no credential, act on no project and read nothing of a tenant): `GET /healthz`, the
 * process answers; `GET /readyz`, it can take new browsers now, or `503 not_ready` with
 * each reason, said without the host's details (which the log has).
 */
export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  // Checked as every operation is: a query the spec does not name is 400.
  const validated: preValidationHookHandler = (request, _reply, done) => {
    try {
      validateRequest(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
  app.get("/healthz", { config: { operationId: "getHealth" }, preValidation: validated }, async () => ({ status: "ok" }));
  // Probes that arrive while one is under way share its answer: a flood of them, which
  // needs no credential, costs one database read at a time.
  let checking: Promise<string[]> | undefined;
  // Logged when they change, not at every probe: an orchestrator asks every few seconds.
  let logged = "";
  const reasonsNow = async (): Promise<string[]> => {
    const [database, browsers] = await Promise.all([databaseProblem(deps.readDatabase), deps.browsersUnavailable()]);
    const memory = deps.memoryLow();
    const details = [database, browsers, memory].filter((reason): reason is string => reason !== undefined);
    if (details.join("; ") !== logged) {
      logged = details.join("; ");
      if (details.length > 0) app.log.warn({ reasons: details }, "not ready for new browsers");
      else app.log.info("ready for new browsers again");
    }
    return [database, browsers === undefined ? undefined : BROWSERS_UNAVAILABLE, memory === undefined ? undefined : MEMORY_LOW].filter(
      (reason): reason is string => reason !== undefined,
    );
  };
  app.get("/readyz", { config: { operationId: "getReadiness" }, preValidation: validated }, async () => {
    checking ??= reasonsNow().finally(() => {
      checking = undefined;
    });
    // Read apart from the shared check, so that a probe sharing one begun before the drain still says so.
    const reasons = deps.draining() ? [DRAINING, ...(await checking)] : await checking;
    if (reasons.length > 0) throw new NotReadyError(reasons);
    return { status: "ready" };
  });
}

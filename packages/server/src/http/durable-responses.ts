import type { FastifyInstance } from "fastify";

/**
 * Holds every response until each commit made before it is on disk (`commits.durable()`): a `201` is never sent for a write a power loss could
 * still undo, and no read shows such a write. The requests that commit at about the same
 * time wait for one sync together, off the event loop; a response with nothing to wait
 * for (every sync done, as for reads between writes) goes out at once. If the disk refuses
 * the sync, the response becomes a 500 `internal_error`.
 */
export function installDurableResponses(app: FastifyInstance, commits: { durable(): Promise<void> | undefined }): void {
  // A callback hook: an async one costs a promise and a microtask on every response.
  app.addHook("onSend", (_request, _reply, payload, done) => {
    const durable = commits.durable();
    if (durable === undefined) done(null, payload);
    else
      durable.then(
        () => done(null, payload),
        (error: unknown) => done(error as Error),
      );
  });
}

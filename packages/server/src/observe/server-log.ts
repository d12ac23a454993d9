/**
 * The server's one logger type: what pino's logger (Fastify's `app.log`) offers, in the
 * shape every module writes to (details first, then the message). A module takes the
 * levels it writes, `Pick<ServerLog, "warn">`, so that a test can hand it a small fake.
 */
export interface ServerLog {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * Every error of this package: a stable `code` for programs, a `message` for people.
 * The bridge's own failures (bad flags, a browser it cannot reach) are these; the
 * service's errors keep the client's classes.
 */
export class McpBridgeError extends Error {
  /** Stable, machine-readable snake_case code; `message` may change. */
  declare readonly code: string;

  /** @param code - stable code; @param message - what happened and what to do. */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A flag or variable the bridge cannot use (`unknown_option`, `invalid_option`,
 * `conflicting_options`, `missing_token`): nothing was started.
 */
export class ConfigError extends McpBridgeError {}

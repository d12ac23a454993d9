// A file of its own: the service and the warm pool both report through it, and the pool
// must not import the service that owns it.
/** Where the browser service and its warm pool report what happens to browsers outside a request. */
export interface BrowserEventLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

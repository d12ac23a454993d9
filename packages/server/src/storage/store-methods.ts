/**
 * The methods of `store` (its own and its classes'), each given to `wrap`: how a store
 * becomes the form its callers use (asynchronous through a gate, or run from programs).
 * A method is looked up at each call, so that one replaced later (a test's spy) is the
 * one called.
 */
export function storeMethods(
  store: object,
  wrap: (method: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown,
): Record<string, (...args: unknown[]) => unknown> {
  const methods: Record<string, (...args: unknown[]) => unknown> = {};
  for (let proto: object | null = store; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === "constructor" || name in methods || typeof (store as Record<string, unknown>)[name] !== "function") continue;
      methods[name] = wrap((...args) => ((store as Record<string, unknown>)[name] as (...a: unknown[]) => unknown).apply(store, args));
    }
  }
  return methods;
}

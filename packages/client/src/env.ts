/**
 * An environment variable, or `undefined` when it is unset or blank. It is read when a
 * client is created, not when this module loads, and `process` is looked up through
 * `globalThis` because browsers and workers have none.
 */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name]?.trim() || undefined;
}

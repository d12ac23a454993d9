/** A JSON pointer from its keys, escaped as RFC 6901 says (`~` → `~0`, `/` → `~1`). */
export function jsonPointer(path: readonly (string | number)[]): string {
  return path.map((key) => `/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

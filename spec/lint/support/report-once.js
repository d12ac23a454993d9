// Reporting each problem once, however many operations reach the node it is about.
import { locationKey } from "./nodes.js";

/** The `who` of a problem that is not about one error response. */
export const NOBODY = { text: "", dedupe: "" };

/**
 * Reports a problem once per location and text: a shared component response is reached
 * from every operation that uses it, and its problem is reported once, at the component,
 * naming the first operation. `who` says which response; `what` is the problem.
 */
export function onceReporter() {
  const seen = new Set();
  return (ctx, location, who, what) => {
    const key = `${locationKey(location)}\n${who.dedupe}\n${what}`;
    if (seen.has(key)) return;
    seen.add(key);
    ctx.report({ message: `${who.text}${what}`, location });
  };
}

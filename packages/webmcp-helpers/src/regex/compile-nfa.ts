import { UnsafeSchemaError } from "../errors.js";
import type { CharSet } from "./char-set.js";
import type { Assertion, PatternNode } from "./parse-pattern.js";

/** One state of a Thompson automaton. */
export type NfaState =
  | { kind: "set"; set: CharSet; next: number }
  | { kind: "split"; next: number; alt: number }
  | { kind: "assert"; test: Assertion; next: number }
  | { kind: "match" };

/** An automaton: its states and the index of the first. */
export interface Nfa {
  states: NfaState[];
  start: number;
}

/**
 * Builds a Thompson automaton from a pattern's tree, back to front (each part is emitted
 * knowing the state that follows it). Counted repetition is expanded into copies, and
 * every state and copy is charged to `maxStates`, so `(a{1000}){1000}` is refused
 * (`pattern_too_complex`) after a bounded amount of work rather than built.
 */
export function compileNfa(tree: PatternNode, maxStates: number, pointer: string): Nfa {
  const states: NfaState[] = [{ kind: "match" }];
  let charged = 0;
  const charge = () => {
    if (++charged > maxStates) {
      throw new UnsafeSchemaError(
        "pattern_too_complex",
        `The pattern at ${pointer || "/"} expands to more than ${maxStates} matcher states (maxPatternStates); the tool's schema is refused.`,
        pointer,
      );
    }
  };
  const add = (state: NfaState) => {
    charge();
    states.push(state);
    return states.length - 1;
  };
  const emit = (node: PatternNode, next: number): number => {
    switch (node.kind) {
      case "set":
        return add({ kind: "set", set: node.set, next });
      case "assert":
        return add({ kind: "assert", test: node.test, next });
      case "seq":
        return node.items.reduceRight((after, item) => emit(item, after), next);
      case "alt": {
        const starts = node.options.map((option) => emit(option, next));
        return starts.reduceRight((rest, first) => add({ kind: "split", next: first, alt: rest }));
      }
      case "repeat": {
        let start = next;
        if (node.max === Infinity) {
          const loop = add({ kind: "split", next: -1, alt: next });
          (states[loop] as { next: number }).next = emit(node.node, loop);
          start = loop;
        } else {
          for (let copy = node.min; copy < node.max; copy++) {
            charge();
            start = add({ kind: "split", next: emit(node.node, start), alt: start });
          }
        }
        for (let copy = 0; copy < node.min; copy++) {
          charge();
          start = emit(node.node, start);
        }
        return start;
      }
    }
  };
  return { states, start: emit(tree, 0) };
}

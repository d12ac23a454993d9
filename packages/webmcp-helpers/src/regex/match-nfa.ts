import type { StepBudget } from "../schema/step-budget.js";
import { inSet, wordChars } from "./char-set.js";
import type { Nfa } from "./compile-nfa.js";
import type { Assertion } from "./parse-pattern.js";

const isWord = (code: number) => code !== -1 && inSet(wordChars, code);

function holds(test: Assertion, atStart: boolean, atEnd: boolean, before: number, after: number): boolean {
  switch (test) {
    case "start":
      return atStart;
    case "end":
      return atEnd;
    case "boundary":
      return isWord(before) !== isWord(after);
    case "notBoundary":
      return isWord(before) === isWord(after);
  }
}

/**
 * Whether the automaton matches anywhere in `text` (JSON Schema's `pattern` is not
 * anchored), by simulating every state at once: each code point of the text is looked
 * at once per live state, so the work is at most states × length, whatever the pattern,
 * and every state visit is spent from `budget`.
 */
export function nfaMatches({ states, start }: Nfa, text: string, budget: StepBudget): boolean {
  // Marks say which states are already in the list being built; one generation per position.
  const marks = new Int32Array(states.length).fill(-1);
  let generation = 0;
  let current: number[] = [];
  let following: number[] = [];
  const stack: number[] = [];

  /** Adds `state` and every state reachable from it without reading a character; true on a match. */
  const close = (list: number[], state: number, index: number, before: number, after: number): boolean => {
    stack.push(state);
    while (stack.length) {
      const id = stack.pop() as number;
      if (marks[id] === generation) continue;
      marks[id] = generation;
      budget.spend();
      const s = states[id];
      switch (s?.kind) {
        case "match":
          stack.length = 0;
          return true;
        case "set":
          list.push(id);
          break;
        case "split":
          stack.push(s.alt, s.next);
          break;
        case "assert":
          if (holds(s.test, index === 0, index === text.length, before, after)) stack.push(s.next);
          break;
      }
    }
    return false;
  };

  let index = 0;
  if (close(current, start, 0, -1, text.length ? (text.codePointAt(0) as number) : -1)) return true;
  while (index < text.length) {
    const code = text.codePointAt(index) as number;
    const nextIndex = index + (code > 0xffff ? 2 : 1);
    const after = nextIndex < text.length ? (text.codePointAt(nextIndex) as number) : -1;
    generation++;
    following.length = 0;
    for (const id of current) {
      budget.spend();
      const s = states[id] as { set: readonly number[]; next: number };
      if (inSet(s.set, code) && close(following, s.next, nextIndex, code, after)) return true;
    }
    // A match may also begin at the next position.
    if (close(following, start, nextIndex, code, after)) return true;
    [current, following] = [following, current];
    index = nextIndex;
  }
  return false;
}

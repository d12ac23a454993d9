import { ConcurrencyLimitExceededError } from "../http/api-errors.js";

/**
 * A project's effective cap, in the seed's order: (1) its own override if set; (2) else
 * the organization's default project cap if set; (3) else `null`, no per-project cap
 * (only the organization limit applies).
 */
export function effectiveProjectCap(projectOverride: number | null, orgDefault: number | null): number | null {
  return projectOverride ?? orgDefault;
}

/** Browsers that may still start under `limit` with `used` taken, floored at zero. */
export function available(limit: number, used: number): number {
  return Math.max(0, limit - used);
}

/** What {@link assertRoomForBrowser} weighs. */
export interface ConcurrencyState {
  /** The organization limit from its plan. */
  planLimit: number;
  /** The project's effective cap, `null` for none (see {@link effectiveProjectCap}). */
  projectCap: number | null;
  /** Running browsers plus pool reservations across the organization. */
  orgUsed: number;
  /** Running browsers plus pool reservations in the project. */
  projectUsed: number;
}

/**
 * Refuses one more browser with 429 `concurrency_limit_exceeded` when the project's
 * effective cap or the organization limit is reached. Both are checked, so a project
 * cap above the organization limit never lets a project pass the organization limit.
 */
export function assertRoomForBrowser(state: ConcurrencyState): void {
  if (state.projectCap !== null && state.projectUsed >= state.projectCap) {
    throw new ConcurrencyLimitExceededError(
      `The project's cap of ${state.projectCap} concurrent browser${state.projectCap === 1 ? " is" : "s is"} reached (${state.projectUsed} in use); stop a browser or raise the cap.`,
    );
  }
  if (state.orgUsed >= state.planLimit) {
    throw new ConcurrencyLimitExceededError(
      `The organization's limit of ${state.planLimit} concurrent browsers is reached (${state.orgUsed} in use, browser pools included); stop a browser or free pool capacity.`,
    );
  }
}

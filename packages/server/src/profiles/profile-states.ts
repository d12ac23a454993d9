import { profileContext, type SecretsVault } from "../secrets/secrets-vault.js";
import { EMPTY_ARCHIVE, type ProfileState, packProfileState, unpackProfileState } from "./profile-archive.js";
import type { ProfileStore } from "./profile-store.js";

/** The most a profile's saved state holds unless configured otherwise: 64 MiB. */
export const DEFAULT_PROFILE_STATE_BYTES = 64 * 1024 * 1024;

/** A profile's state past the cap: nothing of it is stored. */
export class ProfileStateTooLargeError extends Error {
  /** Stable code of the failure. */
  readonly code = "profile_too_large";

  constructor(bytes: number, maxBytes: number) {
    super(`The browser's state is ${bytes} bytes, more than the ${maxBytes} a profile may hold; the profile keeps its previous state.`);
    this.name = "ProfileStateTooLargeError";
  }
}

/**
 * Profiles' saved state, sealed with the server's key (bound to the profile and its
 * project) and stored whole through a {@link ProfileStore}, at most `maxBytes` each.
 */
export class ProfileStates {
  readonly #store: ProfileStore;
  readonly #vault: SecretsVault;
  readonly maxBytes: number;

  constructor(store: ProfileStore, vault: SecretsVault, maxBytes: number) {
    this.#store = store;
    this.#vault = vault;
    this.maxBytes = maxBytes;
  }

  /** The archive of profile `id` (an empty one when it was never saved). */
  async archive(projectId: string, id: string): Promise<Buffer> {
    const sealed = await this.#store.readSnapshot(id);
    return sealed === undefined ? EMPTY_ARCHIVE : this.#vault.openBytes(sealed, profileContext(projectId, id));
  }

  /** The state of profile `id`, or `undefined` when it was never saved. */
  async load(projectId: string, id: string): Promise<ProfileState | undefined> {
    const sealed = await this.#store.readSnapshot(id);
    return sealed === undefined ? undefined : unpackProfileState(this.#vault.openBytes(sealed, profileContext(projectId, id)));
  }

  /**
   * Records on profile `profile` why browser `browserId`'s state was not saved: past the
   * cap (`profile_too_large`, with the sizes), or anything else (`profile_not_saved`,
   * said plainly: a database's or the system's message stays in the server's log).
   */
  async failed(profile: { id: string; projectId: string }, browserId: string, error: unknown): Promise<void> {
    const tooLarge = (error as { code?: unknown } | undefined)?.code === "profile_too_large";
    await this.#store.recordSaveError(profile.id, {
      code: tooLarge ? "profile_too_large" : "profile_not_saved",
      message: tooLarge
        ? (error as Error).message
        : "The browser's state could not be read back whole and stored (it did not close by itself, or its storage came back cut short); the profile keeps its previous state.",
      browser_id: browserId,
      at: new Date().toISOString(),
    });
  }

  /** Replaces the state of profile `id`, all or nothing; past {@link maxBytes}, nothing is stored. */
  async save(profile: { id: string; projectId: string }, state: ProfileState): Promise<void> {
    const archive = packProfileState(state);
    if (archive.length > this.maxBytes) throw new ProfileStateTooLargeError(archive.length, this.maxBytes);
    await this.#store.saveSnapshot(profile.id, this.#vault.sealBytes(archive, profileContext(profile.projectId, profile.id)), archive.length);
  }
}

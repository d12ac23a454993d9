/**
 * The small numbers that `source.tab_id` and `source.frame.frame_id` show for the
 * browser's long DevTools ids. A number is handed out the first time an id is seen and
 * kept for the browser's life (also across a reconnection to it); ids are forgotten
 * when their tab or frame is gone, and numbers are never reused.
 */
export class SourceNumbers {
  readonly #tabs = new Map<string, number>();
  readonly #frames = new Map<string, number>();
  #nextTab = 1;
  #nextFrame = 1;

  /** The number of the tab whose page target has this id. */
  tab(targetId: string): number {
    let number = this.#tabs.get(targetId);
    if (number === undefined) {
      number = this.#nextTab++;
      this.#tabs.set(targetId, number);
    }
    return number;
  }

  /** The number of the frame with this DevTools frame id. */
  frame(frameId: string): number {
    let number = this.#frames.get(frameId);
    if (number === undefined) {
      number = this.#nextFrame++;
      this.#frames.set(frameId, number);
    }
    return number;
  }

  /** Forgets a closed tab. */
  forgetTab(targetId: string): void {
    this.#tabs.delete(targetId);
  }

  /** Forgets a removed frame. */
  forgetFrame(frameId: string): void {
    this.#frames.delete(frameId);
  }
}

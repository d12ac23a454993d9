/**
 * At most one build in flight for equal inputs: a caller whose inputs equal those of the
 * build running now awaits that build's promise instead of starting its own. Only the
 * running build is kept; once it settles the next caller builds again, so nothing it
 * produced outlives its callers.
 */
export class SharedBuild<Input, Output> {
  readonly #sameInput: (a: Input, b: Input) => boolean;
  #running: { input: Input; output: Promise<Output> } | undefined;

  /** `sameInput` says when two inputs are sure to build the same output. */
  constructor(sameInput: (a: Input, b: Input) => boolean) {
    this.#sameInput = sameInput;
  }

  /**
   * The output for `input`: the running build's when its input is the same, else a new
   * `build(input)`, which becomes the running one. `shared` says which.
   */
  run(input: Input, build: (input: Input) => Promise<Output>): { output: Promise<Output>; shared: boolean } {
    const running = this.#running;
    if (running && this.#sameInput(running.input, input)) return { output: running.output, shared: true };
    const started = { input, output: build(input) };
    this.#running = started;
    const settled = () => {
      if (this.#running === started) this.#running = undefined;
    };
    // The callers see a failure through `output`; this branch only lets go of the build.
    started.output.then(settled, settled);
    return { output: started.output, shared: false };
  }
}

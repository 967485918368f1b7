// Long loops over a zone file's lines run in slices: after `budgetMs` of work the loop awaits the
// event loop's next turn, so a 20,000-record file never holds other requests up for long.
export class Slices {
  private since = performance.now();
  constructor(private readonly budgetMs = 8) {}

  /** Whether this slice's time is spent (check often; await pause() when it is). */
  due(): boolean {
    return performance.now() - this.since >= this.budgetMs;
  }

  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

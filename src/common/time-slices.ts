// Long loops in a request's path run in slices: after `budgetMs` of work the loop awaits the
// event loop's next turn, so one account's large change never holds other requests up for long.
export class TimeSlices {
  private since = performance.now();
  constructor(private readonly budgetMs = 8) {}

  /** Awaits the next turn of the event loop when this slice's time is spent (call often). */
  async breathe(): Promise<void> {
    if (performance.now() - this.since < this.budgetMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** JSON text of an array, written an element at a time with pauses (megabytes of records). */
export async function jsonArrayInSlices(items: readonly unknown[], slices = new TimeSlices()): Promise<string> {
  const parts: string[] = [];
  for (const item of items) {
    await slices.breathe();
    parts.push(JSON.stringify(item));
  }
  return `[${parts.join(',')}]`;
}

// Waiting for something to happen, on a machine that may be loaded: the condition is polled until
// it holds (at once when it does), up to a deadline that only a real failure reaches — instead of
// a fixed sleep, long enough on an idle machine and too short on a busy one.

/** Polls `check` every `everyMs` until it gives a truthy value (returned); throws, naming `what`, after `timeoutMs`. */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// Waiting in tests for something another process or thread does: `probe` is asked every `everyMs`
// until it gives a value (anything but undefined, null or false), which is returned; after
// `timeoutMs` the wait fails naming `what` (a function: what was seen last, read at the failure).
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string | (() => string),
  { timeoutMs = 10_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

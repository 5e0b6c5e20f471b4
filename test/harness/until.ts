// Waiting on a condition, not a duration: polls until it holds, with a ceiling far above what a
// loaded machine needs, so a slow run passes and only a real failure fails.

/** Resolves once `condition` holds; throws naming `what` after `timeoutMs` (20 s unless given). */
export async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

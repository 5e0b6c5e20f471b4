// What went wrong with a call that got no answer, in words safe for a log line: the error code
// only, never the message (a foreign message could echo a URL, a header or a body).

/** The error code of a fetch failure (undici nests the system error in `cause`). */
export function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function describeNetworkError(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return 'no answer in time';
  const code = networkErrorCode(error);
  return code !== undefined ? `network error ${code}` : 'network error';
}

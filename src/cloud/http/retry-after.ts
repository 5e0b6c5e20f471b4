// Reads an HTTP Retry-After value (delay in seconds, or an HTTP date) as milliseconds from now.

/** Delay in ms, or undefined when absent or unreadable. A date in the past gives 0. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates always name a weekday or month: this keeps stray numbers like "1.5" from parsing as dates.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

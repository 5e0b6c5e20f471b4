// A time as the service sends it: 13-digit milliseconds as the spec shows, 10-digit seconds, as a
// number or a digit string. Payload schemas keep it as sent and the mapping reads it here, so a
// malformed time drops the time, never the event (a zod transform in the schema cost more per
// callback than the rest of the payload).

/** Epoch milliseconds of a sent time (seconds are scaled up); undefined when it is not a time. */
export function epochMs(value: unknown): number | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,13}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(number) || number < 0) return undefined;
  return number < 1e11 ? Math.round(number * 1000) : Math.round(number);
}

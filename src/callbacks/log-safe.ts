// Values taken from a request end up in log lines and counters; this keeps them short and free of
// control characters so a sender cannot forge or flood lines.

/** Letters, digits and a few marks only, short: values from a request are safe to log. */
export function printable(value: string | undefined): string {
  return (value ?? '-').replace(/[^\w.:/-]/g, '?').slice(0, 60);
}

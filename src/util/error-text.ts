// Plain text of anything thrown, for log lines and UI answers. Callers never put stack traces in
// front of a user; errors of this plugin already carry messages written for people.
export function errorText(error: unknown, fallback?: string): string {
  if (error instanceof Error) return error.message;
  return fallback ?? String(error);
}

// Reads the expiry of an access token when it happens to be a JWT. Nothing here verifies a
// signature (the service does that); a token that cannot be decoded is simply "expiry unknown".

export interface JwtTimes {
  /** `exp` in epoch milliseconds. */
  expiresAt?: number;
  /** `iat` in epoch milliseconds. */
  issuedAt?: number;
}

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

/** `exp`/`iat` of a JWT, tolerant of anything that is not one (returns {}). */
export function decodeJwtTimes(token: string): JwtTimes {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined || parts[1] === '') return {};
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null) return {};
    const claims = payload as Record<string, unknown>;
    const times: JwtTimes = {};
    const expiresAt = seconds(claims.exp);
    const issuedAt = seconds(claims.iat);
    if (expiresAt !== undefined) times.expiresAt = expiresAt;
    if (issuedAt !== undefined) times.issuedAt = issuedAt;
    return times;
  } catch {
    return {};
  }
}

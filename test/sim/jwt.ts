// Minimal HS256 JWTs for the simulated access tokens (sign and verify with node:crypto).
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface AccessClaims {
  sub: string;
  iat: number;
  exp: number;
  /** Issue sequence number: revocation invalidates everything up to a number. */
  seq: number;
  client_id: string;
  jti: string;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export function signJwt(claims: AccessClaims, secret: string): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

/** Returns the claims when the signature is ours and the shape is right; undefined otherwise. Expiry is the caller's call. */
export function verifyJwt(token: string, secret: string): AccessClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [head, body, sig] = parts as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: unknown };
    if (header.alg !== 'HS256') return undefined;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<AccessClaims>;
    if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || typeof claims.iat !== 'number' ||
      typeof claims.seq !== 'number' || typeof claims.client_id !== 'string' || typeof claims.jti !== 'string') {
      return undefined;
    }
    return claims as AccessClaims;
  } catch {
    return undefined;
  }
}

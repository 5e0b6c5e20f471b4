// The JWT's exp and iat (the refresh grant runs when the token nears expiry,
// "expires_in, or the JWT exp").
import { describe, expect, it } from 'vitest';

import { decodeJwtTimes } from '../../../src/cloud/tokens/jwt.js';

const jwt = (claims: object): string =>
  `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

describe('refresh "when the token nears expiry (expires_in, or the JWT exp)"', () => {
  it('reads exp and iat of a JWT as epoch milliseconds', () => {
    expect(decodeJwtTimes(jwt({ exp: 1_800_000_000, iat: 1_700_000_000 }))).toEqual({ expiresAt: 1_800_000_000_000, issuedAt: 1_700_000_000_000 });
  });

  it('"a token that cannot be decoded is not an error": opaque, broken or odd tokens give no expiry', () => {
    for (const token of ['opaque-token', 'a.b', 'a.!!!.c', `x.${Buffer.from('[1,2]').toString('base64url')}.y`, jwt({ exp: 'soon' }), jwt({ exp: -5 }), '', '..']) {
      expect(decodeJwtTimes(token)).toEqual({});
    }
  });
});

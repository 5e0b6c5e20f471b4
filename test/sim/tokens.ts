// The simulated authorization server's state: OAuth clients, refresh tokens (single use, one year),
// access tokens (HS256 JWTs), authorization codes, each bound to a client and a user. Pure
// bookkeeping; the HTTP routes live in oauth-routes.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import type { SimClock } from './clock.js';
import { signJwt, verifyJwt, type AccessClaims } from './jwt.js';

export const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;
/** The spec's "currently four months". */
export const DEFAULT_ACCESS_TOKEN_LIFETIME_SECONDS = 120 * 24 * 60 * 60;
export const AUTH_CODE_LIFETIME_MS = 10 * 60 * 1000;

export type RefreshTokenState = 'issued' | 'used' | 'expired' | 'revoked' | 'unknown';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

export interface OAuthError {
  error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'unauthorized_client';
  error_description: string;
}

export type GrantResult = { ok: true; body: TokenResponse } | { ok: false; body: OAuthError };

interface RefreshRecord {
  clientId: string;
  userId: string;
  issuedAt: number;
  used: boolean;
  revoked: boolean;
}

interface CodeRecord {
  clientId: string;
  redirectUri: string;
  userId: string;
  expiresAt: number;
  used: boolean;
}

export interface TokenAuthorityOptions {
  clock: SimClock;
  accessTokenLifetimeSeconds: number;
  /** How much each API response's fresh header token extends validity ("slightly"). */
  accessTokenExtensionSeconds: number;
}

export class TokenAuthority {
  private readonly secret = randomBytes(32).toString('hex');
  private readonly refresh = new Map<string, RefreshRecord>();
  private readonly codes = new Map<string, CodeRecord>();
  private readonly clients = new Map<string, string>();
  private seq = 0;
  private revokedUpTo = 0;
  /** Per user: access tokens up to this sequence number are revoked (the user took the integration's access away). */
  private readonly revokedForUser = new Map<string, number>();
  /** Successful refresh grants (the brief's `stats.grants`). */
  refreshGrants = 0;
  codeGrants = 0;
  /** Successful grants per user (refresh and authorization-code). */
  readonly grantsByUser = new Map<string, { grants: number; codeGrants: number }>();

  constructor(private readonly options: TokenAuthorityOptions) {}

  get accessTokenLifetimeSeconds(): number {
    return this.options.accessTokenLifetimeSeconds;
  }

  /** Makes a client known (idempotent for the same secret). */
  addClient(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
  }

  issueRefreshToken(clientId: string, userId: string): string {
    const token = `rt_${randomBytes(24).toString('base64url')}`;
    this.refresh.set(token, { clientId, userId, issuedAt: this.options.clock.now(), used: false, revoked: false });
    return token;
  }

  private count(userId: string, kind: 'grants' | 'codeGrants'): void {
    const counts = this.grantsByUser.get(userId) ?? { grants: 0, codeGrants: 0 };
    counts[kind] += 1;
    this.grantsByUser.set(userId, counts);
  }

  revokeRefreshToken(token: string): void {
    const record = this.refresh.get(token);
    if (record) record.revoked = true;
  }

  refreshTokenState(token: string): RefreshTokenState {
    const record = this.refresh.get(token);
    if (!record) return 'unknown';
    if (record.revoked) return 'revoked';
    if (record.used) return 'used';
    if (this.options.clock.now() - record.issuedAt >= ONE_YEAR_MS) return 'expired';
    return 'issued';
  }

  private checkClient(clientId: string | undefined, clientSecret: string | undefined): OAuthError | undefined {
    if (!clientId || !clientSecret) return { error: 'invalid_request', error_description: 'client_id and client_secret are required' };
    if (this.clients.get(clientId) !== clientSecret) {
      return { error: 'invalid_client', error_description: 'client authentication failed' };
    }
    return undefined;
  }

  /** The refresh grant of the spec's state table. On success the presented token becomes used at once. */
  grantRefresh(form: Record<string, string | undefined>): GrantResult {
    const clientError = this.checkClient(form.client_id, form.client_secret);
    if (clientError) return { ok: false, body: clientError };
    const token = form.refresh_token;
    if (!token) return { ok: false, body: { error: 'invalid_request', error_description: 'refresh_token is required' } };
    const state = this.refreshTokenState(token);
    const record = this.refresh.get(token);
    if (state !== 'issued' || !record) {
      const words: Record<Exclude<RefreshTokenState, 'issued'>, string> = {
        used: 'refresh token has already been used',
        expired: 'refresh token has expired',
        revoked: 'refresh token has been revoked',
        unknown: 'refresh token is not valid',
      };
      return { ok: false, body: { error: 'invalid_grant', error_description: words[state as Exclude<RefreshTokenState, 'issued'>] } };
    }
    if (record.clientId !== form.client_id) return { ok: false, body: { error: 'invalid_grant', error_description: 'refresh token was issued to another client' } };
    record.used = true;
    this.refreshGrants += 1;
    this.count(record.userId, 'grants');
    return { ok: true, body: this.tokenResponse(record.clientId, record.userId) };
  }

  createAuthorizationCode(clientId: string, redirectUri: string, userId: string): string {
    const code = `ac_${randomBytes(18).toString('base64url')}`;
    this.codes.set(code, { clientId, redirectUri, userId, expiresAt: this.options.clock.now() + AUTH_CODE_LIFETIME_MS, used: false });
    return code;
  }

  isKnownClient(clientId: string | undefined): boolean {
    return clientId !== undefined && this.clients.has(clientId);
  }

  /** RFC 6749 section 4.1.3: codes are single use, short lived and bound to client and redirect_uri. */
  grantAuthorizationCode(form: Record<string, string | undefined>): GrantResult {
    const clientError = this.checkClient(form.client_id, form.client_secret);
    if (clientError) return { ok: false, body: clientError };
    const code = form.code;
    if (!code) return { ok: false, body: { error: 'invalid_request', error_description: 'code is required' } };
    const record = this.codes.get(code);
    if (!record) return { ok: false, body: { error: 'invalid_grant', error_description: 'authorization code is not valid' } };
    if (record.used) return { ok: false, body: { error: 'invalid_grant', error_description: 'authorization code has already been used' } };
    if (this.options.clock.now() >= record.expiresAt) return { ok: false, body: { error: 'invalid_grant', error_description: 'authorization code has expired' } };
    if (record.clientId !== form.client_id) return { ok: false, body: { error: 'invalid_grant', error_description: 'authorization code was issued to another client' } };
    if (record.redirectUri !== form.redirect_uri) return { ok: false, body: { error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' } };
    record.used = true;
    this.codeGrants += 1;
    this.count(record.userId, 'codeGrants');
    return { ok: true, body: this.tokenResponse(record.clientId, record.userId) };
  }

  private tokenResponse(clientId: string, userId: string): TokenResponse {
    const lifetime = this.options.accessTokenLifetimeSeconds;
    const nowSeconds = Math.floor(this.options.clock.now() / 1000);
    return {
      access_token: this.mint(clientId, userId, nowSeconds, nowSeconds + lifetime),
      token_type: 'Bearer',
      expires_in: lifetime,
      refresh_token: this.issueRefreshToken(clientId, userId),
    };
  }

  private mint(clientId: string, userId: string, iat: number, exp: number): string {
    this.seq += 1;
    const claims: AccessClaims = { sub: userId, iat, exp, seq: this.seq, client_id: clientId, jti: randomUUID() };
    return signJwt(claims, this.secret);
  }

  /** A fresh access token outside a grant (tests, the CLI's ready account). */
  mintAccessToken(clientId: string, userId: string, lifetimeSeconds = this.options.accessTokenLifetimeSeconds): string {
    const nowSeconds = Math.floor(this.options.clock.now() / 1000);
    return this.mint(clientId, userId, nowSeconds, nowSeconds + lifetimeSeconds);
  }

  /** Valid = our signature, not expired, not revoked. Older tokens stay valid (spec). */
  verifyAccessToken(token: string | undefined): AccessClaims | undefined {
    if (!token) return undefined;
    const claims = verifyJwt(token, this.secret);
    if (!claims) return undefined;
    if (claims.seq <= this.revokedUpTo || claims.seq <= (this.revokedForUser.get(claims.sub) ?? 0)) return undefined;
    if (this.options.clock.now() >= claims.exp * 1000) return undefined;
    return claims;
  }

  /** The `x-svc-access-token` header on a successful API response: validity extended slightly. */
  extendAccessToken(claims: AccessClaims): string {
    const nowSeconds = Math.floor(this.options.clock.now() / 1000);
    return this.mint(claims.client_id, claims.sub, nowSeconds, claims.exp + this.options.accessTokenExtensionSeconds);
  }

  revokeAccessTokens(): void {
    this.revokedUpTo = this.seq;
  }

  /** Every refresh and access token of one user so far is revoked; other users keep theirs. */
  revokeUser(userId: string): void {
    for (const record of this.refresh.values()) if (record.userId === userId) record.revoked = true;
    this.revokedForUser.set(userId, this.seq);
  }
}

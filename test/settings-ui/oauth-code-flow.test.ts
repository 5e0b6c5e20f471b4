import { describe, expect, it } from 'vitest';

import { AUTHORIZATION_TTL_MS, AuthorizationCodeFlow, parseRedirect } from '../../src/settings-ui/oauth-code-flow.js';
import { UiError } from '../../src/settings-ui/ui-error.js';

const ACCOUNT = { authUrl: 'https://auth.example.com', clientId: 'client-1' };
const REDIRECT = 'https://home.example.net/linked';

/** Step 1, then what the service appends to the redirect address after "Allow". */
function started(flow: AuthorizationCodeFlow, redirectUri = REDIRECT): { state: string; back: (query: string) => string } {
  const url = new URL(flow.start(ACCOUNT, redirectUri).url);
  const state = url.searchParams.get('state') ?? '';
  return { state, back: (query) => `${redirectUri}?${query}&state=${encodeURIComponent(state)}` };
}

describe('README "Link your account": parsing the pasted redirect address (RFC 6749 4.1.2)', () => {
  it('reads a full address or a bare query', () => {
    expect(parseRedirect('https://x.example/cb?code=abc&state=s1')).toMatchObject({ code: 'abc', state: 's1', base: 'https://x.example/cb' });
    expect(parseRedirect('?code=abc&state=s1')).toMatchObject({ code: 'abc', state: 's1' });
  });

  it('reads a refusal and its description, and leaves out blank parameters', () => {
    expect(parseRedirect('  https://x.example/cb?error=access_denied&error_description=No+thanks&state=s&code=  ')).toEqual({
      error: 'access_denied', errorDescription: 'No thanks', state: 's', base: 'https://x.example/cb',
    });
  });
});

describe('README "Link your account": the state of a sign-in is random, kept 15 minutes and used once', () => {
  it('the sign-in address carries response_type=code, client_id, redirect_uri and a state of the account id and a fresh 32-byte nonce', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    const url = new URL(flow.start(ACCOUNT, REDIRECT).url);
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.com/authorization');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ response_type: 'code', client_id: 'client-1', redirect_uri: REDIRECT });
    const [accountId, nonce] = (url.searchParams.get('state') ?? '').split('.');
    expect(accountId).toBe('main');
    expect(Buffer.from(nonce ?? '', 'base64url')).toHaveLength(32);
    expect(new URL(flow.start(ACCOUNT, REDIRECT).url).searchParams.get('state')).not.toBe(url.searchParams.get('state'));
  });

  it('refuses a redirect address that is not a full http(s) address', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    for (const bad of [undefined, '', '   ', 'home.example.net/linked', 'ftp://x.example/cb', 'https:///nohost']) {
      expect(() => flow.start(ACCOUNT, bad)).toThrow(/Enter the redirect address/);
    }
  });

  it('redeems the code of a matching state with the redirect address of step 1, once', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    const { back } = started(flow);
    expect(flow.redeem(back('code=c-1'))).toEqual({ code: 'c-1', redirectUri: REDIRECT, accountId: 'main' });
    expect(() => flow.redeem(back('code=c-1'))).toThrow(/does not answer the sign-in started here/);
  });

  it('forgets a state older than 15 minutes', () => {
    let now = 0;
    const flow = new AuthorizationCodeFlow(() => now);
    const { back } = started(flow);
    now += AUTHORIZATION_TTL_MS + 1;
    expect(() => flow.redeem(back('code=c-1'))).toThrow(/older than 15 minutes/);
  });

  it('accepts a state at exactly 15 minutes', () => {
    let now = 0;
    const flow = new AuthorizationCodeFlow(() => now);
    const { back } = started(flow);
    now += AUTHORIZATION_TTL_MS;
    expect(flow.redeem(back('code=c-1')).code).toBe('c-1');
  });

  it('a refusal spends the state: "Allow" was not chosen, or the service named another error', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    const denied = started(flow);
    expect(() => flow.redeem(denied.back('error=access_denied'))).toThrow(/not allowed/);
    expect(() => flow.redeem(denied.back('code=c-1'))).toThrow(/does not answer/);
    const other = started(flow);
    expect(() => flow.redeem(other.back('error=server_error&error_description=try+later'))).toThrow('The Lock Access sign-in answered "server_error" (try later). Start again.');
  });

  it('refuses an empty paste, an address without a code, and one that points at another redirect address', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    expect(() => flow.redeem('  ')).toThrow(/Paste the whole address/);
    expect(() => flow.redeem(started(flow).back('nothing=here'))).toThrow(/has no code in it/);
    const { state } = started(flow);
    expect(() => flow.redeem(`https://evil.example.com/linked?code=c&state=${state}`)).toThrow(/not the redirect address/);
  });

  it('a bare query or a trailing slash still matches the redirect address of step 1', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    const bare = started(flow);
    expect(flow.redeem(`?code=c-2&state=${bare.state}`)).toEqual({ code: 'c-2', redirectUri: REDIRECT, accountId: 'main' });
    const slash = started(flow);
    expect(flow.redeem(`${REDIRECT}/?code=c-3&state=${slash.state}`).code).toBe('c-3');
  });

  it('every refusal is a UiError, whose words the page shows as they are', () => {
    const flow = new AuthorizationCodeFlow(() => 0);
    expect(() => flow.redeem('https://x.example/cb?code=c&state=unknown')).toThrow(UiError);
    expect(() => flow.start(ACCOUNT, 'nope')).toThrow(UiError);
  });
});

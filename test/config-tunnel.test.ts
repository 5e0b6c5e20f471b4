// Design "Reach", built-in tunnel: `webhook.tunnel` replaces webhook.publicUrl (the tunnel wins
// when both are set, with a warning), its authtoken is a secret, and a pasted domain is accepted.
import { describe, expect, it } from 'vitest';

import { checkConfig, webhookPrefix } from '../src/config.js';
import { configProblems } from '../src/settings-ui/config-check.js';

const account = {
  platform: 'LockAccess',
  apiKey: 'key',
  clientId: 'client',
  clientSecret: 'secret',
  baseUrl: 'https://api.example.com',
  authUrl: 'https://auth.example.com',
};
const AUTHTOKEN = '2abcDEFghiJKLmnoPQRstuVWX_1234567890abcdefghij';

describe('design "Reach": webhook.tunnel in the config', () => {
  it('a tunnel alone is a complete webhook config: no publicUrl needed, provider ngrok by default, no listener prefix', () => {
    const check = checkConfig({ ...account, webhook: { tunnel: { authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' } } });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.config.webhook.tunnel).toEqual({ provider: 'ngrok', authtoken: AUTHTOKEN, domain: 'calm-otter.ngrok-free.app' });
    expect(check.config.webhook.publicUrl).toBeUndefined();
    expect(webhookPrefix(check.config.webhook)).toBe('');
    expect(check.warnings).toEqual([]);
  });

  it('neither publicUrl nor a tunnel: publicUrl is named as missing, with the tunnel as the other way', () => {
    const check = checkConfig({ ...account, webhook: {} });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.missing).toEqual(['webhook.publicUrl']);
    expect(configProblems({ ...account, webhook: {} })).toEqual([]);
    const problems = configProblems({ ...account, webhook: { listenPort: 8582 } });
    expect(problems).toEqual([]);
  });

  it('a tunnel without an authtoken names the authtoken as missing (and the settings page lets it be filled in later)', () => {
    const check = checkConfig({ ...account, webhook: { tunnel: { provider: 'ngrok' } } });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.missing).toEqual(['webhook.tunnel.authtoken']);
    expect(configProblems({ ...account, webhook: { tunnel: { provider: 'ngrok' } } })).toEqual([]);
  });

  it('both set: the tunnel wins with a warning, and publicUrl still gives the listener its path', () => {
    const check = checkConfig({ ...account, webhook: { publicUrl: 'https://home.example.net/lock-access', tunnel: { authtoken: AUTHTOKEN } } });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.warnings.join('\n')).toMatch(/both set: the ngrok tunnel's address is used/);
    expect(webhookPrefix(check.config.webhook)).toBe('/lock-access');
  });

  it('a domain pasted with https:// and a slash is taken as the domain; a path or spaces inside are refused with what to enter', () => {
    const pasted = checkConfig({ ...account, webhook: { tunnel: { authtoken: AUTHTOKEN, domain: ' https://Calm-Otter.ngrok-free.app/ ' } } });
    expect(pasted.ok && pasted.config.webhook.tunnel?.domain).toBe('calm-otter.ngrok-free.app');
    const wrong = checkConfig({ ...account, webhook: { tunnel: { authtoken: AUTHTOKEN, domain: 'calm otter.ngrok-free.app/x' } } });
    expect(wrong.ok).toBe(false);
    if (wrong.ok) return;
    expect(wrong.problems.join('\n')).toMatch(/webhook\.tunnel\.domain must be a domain name such as name\.ngrok-free\.app/);
  });

  it('an authtoken pasted with spaces is refused without echoing it; another provider is refused by name', () => {
    const spaced = checkConfig({ ...account, webhook: { tunnel: { authtoken: ` ${AUTHTOKEN}` } } });
    expect(spaced.ok).toBe(false);
    if (spaced.ok) return;
    expect(spaced.problems.join('\n')).toMatch(/webhook\.tunnel\.authtoken has spaces/);
    expect(spaced.problems.join('\n')).not.toContain(AUTHTOKEN);
    const other = checkConfig({ ...account, webhook: { tunnel: { provider: 'cloudflare', authtoken: AUTHTOKEN } } });
    expect(other.ok).toBe(false);
    if (other.ok) return;
    expect(other.problems.join('\n')).toMatch(/provider must be "ngrok"/);
  });
});

// The plugin's platform block pointed at a simulator, with the listener on 127.0.0.1:listenPort
// under /lock-access (plain http: the simulator delivers on this machine). Shared by the end-to-end
// tests, the benchmarks and the demo; `extra` adds or overrides fields.
import type { Simulator } from './index.js';

export function simPlatformConfig(sim: Simulator, listenPort: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    platform: 'LockAccess',
    name: 'Lock Access',
    apiKey: sim.account.apiKey,
    clientId: sim.account.clientId,
    clientSecret: sim.account.clientSecret,
    refreshToken: sim.account.refreshToken,
    baseUrl: sim.baseUrl,
    authUrl: sim.authUrl,
    webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort },
    ...extra,
  };
}

/**
 * An entry of `accounts` for one of the simulator's extra accounts: its id, name and refresh token,
 * and its API key and client only where they differ from the main account's (omitted ones inherit).
 */
export function simAccountEntry(sim: Simulator, accountId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const account = sim.accountOf(accountId);
  const main = sim.account;
  return {
    id: account.id,
    name: account.name,
    refreshToken: account.refreshToken,
    ...(account.apiKey === main.apiKey ? {} : { apiKey: account.apiKey }),
    ...(account.clientId === main.clientId ? {} : { clientId: account.clientId, clientSecret: account.clientSecret }),
    ...extra,
  };
}

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

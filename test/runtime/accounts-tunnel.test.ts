// A tunnel that comes back at another address, with several accounts, in process: every account's
// registrations follow the new address (an extra account's under its own `/a/<id>` path), not only
// the main account's. The ngrok SDK is replaced by a script whose listener forwards nowhere: the
// two addresses are this machine's listener under two names, so the simulator can reach both.
import { describe, expect, it, vi } from 'vitest';

import { startPlugin } from '../../src/runtime/start-plugin.js';
import { simAccountEntry } from '../sim/plugin-config.js';
import { pluginBed, waitFor } from './plugin-bed.js';

const sdk = vi.hoisted(() => ({
  origin: '',
  onStatusChange: undefined as ((status: string) => void) | undefined,
}));

vi.mock('@ngrok/ngrok', () => ({
  forward: (config: { onStatusChange?: (status: string) => void }) => {
    sdk.onStatusChange = config.onStatusChange;
    return Promise.resolve({ url: () => sdk.origin, close: () => Promise.resolve() });
  },
}));

describe('several accounts behind a tunnel', () => {
  const bed = pluginBed('accounts-tunnel', {
    accounts: [{ id: 'cabin', name: 'Cabin' }],
    locks: [{ id: 'L1', name: 'Front Door' }, { id: 'L2', name: 'Cabin Door', accounts: ['cabin'] }],
  });

  it('the tunnel back at a new address: every account\'s registrations follow it, the extra account\'s on its own path', async () => {
    const first = `http://127.0.0.1:${bed.port}`;
    const second = `http://localhost:${bed.port}`;
    sdk.origin = first;
    const hb = bed.homebridge({ config: {
      webhook: { listenHost: '127.0.0.1', listenPort: bed.port, deliveryCheckMinutes: 0, tunnel: { provider: 'ngrok', authtoken: '2madeUpAuthtoken_0123456789abcdefghijklmnopqrstu' } },
      userWebhook: false,
      refreshStateOnStart: false,
      accounts: [simAccountEntry(bed.sim, 'cabin')],
    } });
    const running = await startPlugin(hb.context);
    if (!running) throw new Error('the plugin should have started');
    const urls = () => bed.sim.registrations().map((r) => r.url).sort();
    await waitFor(() => urls().length === 2 && urls().every((url) => url.startsWith(first)));
    // No account's run is under way to pick up the new address by itself.
    await running.watchers.runs.settled();

    // The SDK's session drops and reconnects at another address.
    sdk.origin = second;
    sdk.onStatusChange?.('closed');
    sdk.onStatusChange?.('connected');
    await waitFor(() => urls().every((url) => url.startsWith(second)));
    expect(urls()).toEqual([`${second}/a/cabin/lock/L2`, `${second}/lock/L1`]);
    expect(bed.sim.registrations().find((r) => r.scope === 'L2')?.account).toBe('cabin');
  });
});

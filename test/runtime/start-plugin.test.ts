// The plugin built in stages, in process: the real HomebridgeAPI of Homebridge 2 (as the accessory
// tests use it), the service simulator on port 0 and the listener on a free port of this machine.
// Each record a stage builds is read here as the next stage reads it; nothing is a stand-in.
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { PlatformAccessory } from 'homebridge';
import { describe, expect, it } from 'vitest';

import { deliveryAccessoryUuid } from '../../src/homekit/delivery-sensor.js';
import { startPlugin } from '../../src/runtime/start-plugin.js';
import { LEFTOVER_AGE_MS } from '../../src/storage/leftover-temp-files.js';
import { restart, service } from '../homekit/hap-env.js';
import { pluginBed, waitFor } from './plugin-bed.js';

describe('the plugin built in stages, in process', () => {
  const bed = pluginBed('start-plugin', { locks: [{ id: 'L1', name: 'Front Door' }] });

  /** One Homebridge start: a fresh API on the test's storage, with what its cache restored. */
  const homebridge = (cachedAccessories: PlatformAccessory[] = [], config: Record<string, unknown> = {}) => bed.homebridge({ cachedAccessories, config });

  it('serves the lock, registers its webhooks at the public address, and the simulator\'s signed callback reaches HomeKit', async () => {
    const hb = homebridge();
    const running = await startPlugin(hb.context);
    if (!running) throw new Error('the plugin should have started');
    expect(running.listener.receiver?.port).toBe(bed.port);
    // Discovery runs behind the start: the lock joins once the service has listed it.
    await waitFor(() => hb.registered.some((a) => a.displayName === 'Front Door'));
    await waitFor(() => bed.sim.registrations().length === 2);
    expect(bed.sim.registrations().every((r) => r.url.startsWith(`http://127.0.0.1:${bed.port}/lock-access/`))).toBe(true);
    expect(running.files.status.status.link.state).toBe('linked');
    // The status file's device list follows the registry as a view, with where discovery found the lock.
    expect(running.files.status.status.devices).toEqual([expect.objectContaining({ kind: 'lock', id: 'L1', name: 'Front Door', source: 'service' })]);

    await bed.sim.fire('lock', { lockId: 'L1' });
    await bed.sim.idle();
    await waitFor(() => running.listener.registry.lock('L1')?.state.lock === 'locked');
    const accessory = running.views.homekit.accessoryOf('lock', 'L1');
    if (!accessory) throw new Error('no accessory for the lock');
    const { Service: S, Characteristic: C } = hb.api.hap;
    await waitFor(() => service(accessory, S.LockMechanism).getCharacteristic(C.LockCurrentState).value === C.LockCurrentState.SECURED);
    // The event log and the status file follow the routed event.
    expect(running.files.status.status.receiver.lastCallbacks['lock:L1']).toBeDefined();
  });

  it('one start asks the service for its devices once: the setup against the account runs once', async () => {
    const hb = homebridge();
    const running = await startPlugin(hb.context);
    if (!running) throw new Error('the plugin should have started');
    await waitFor(() => bed.sim.registrations().length === 2);
    await running.watchers.setup.settled();
    expect(bed.sim.stats.byRoute['GET /api/users/locks/mine']).toBe(1);
    expect(bed.sim.stats.byRoute['GET /api/users/doorbells/mine']).toBe(1);
  });

  it('shutdown closes the listener; a restart adopts the cached lock and delivery sensor, registering nothing twice', async () => {
    const first = homebridge([], { webhook: { publicUrl: `http://127.0.0.1:${bed.port}/lock-access`, listenHost: '127.0.0.1', listenPort: bed.port, deliveryCheckMinutes: 60 } });
    const running = await startPlugin(first.context);
    if (!running) throw new Error('the plugin should have started');
    expect(first.registered.map((a) => a.UUID)).toContain(deliveryAccessoryUuid(first.api));
    await waitFor(() => first.registered.some((a) => a.displayName === 'Front Door'));
    await waitFor(() => bed.sim.registrations().length === 2);
    await first.shutdown.run();
    await expect(fetch(`http://127.0.0.1:${bed.port}/lock-access/health`)).rejects.toThrow();

    const cached = first.registered.map((accessory) => restart(first.api, accessory));
    const second = homebridge(cached, { webhook: { publicUrl: `http://127.0.0.1:${bed.port}/lock-access`, listenHost: '127.0.0.1', listenPort: bed.port, deliveryCheckMinutes: 60 } });
    const again = await startPlugin(second.context);
    expect(again?.views.homekit.accessoryOf('lock', 'L1')).toBe(cached.find((a) => a.displayName === 'Front Door'));
    // Nothing registered twice: the lock and the delivery sensor are adopted from the cache.
    expect(second.registered).toEqual([]);
  });

  it('an unlinked plugin still answers callbacks but drops their events', async () => {
    const hb = homebridge();
    const running = await startPlugin(hb.context);
    if (!running) throw new Error('the plugin should have started');
    await waitFor(() => bed.sim.registrations().length === 2);
    // Unlinked in the settings UI's process: the link goes idle, the registrations stay at the service here.
    running.link.control.onLinkState('unlinked');
    await bed.sim.fire('lock', { lockId: 'L1' });
    await bed.sim.idle();
    expect(running.listener.receiver?.stats.accepted).toBeGreaterThan(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(running.listener.registry.lock('L1')?.state.lock).not.toBe('locked');
    expect(running.files.status.status.receiver.lastCallbacks['lock:L1']).toBeUndefined();
  });

  it('a listener port in use: one error saying what to change; the devices are served and the link runs all the same', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(bed.port, '127.0.0.1', resolve));
    try {
      const hb = homebridge([], { webhook: { publicUrl: `http://127.0.0.1:${bed.port}/lock-access`, listenHost: '127.0.0.1', listenPort: bed.port, deliveryCheckMinutes: 60 } });
      const running = await startPlugin(hb.context);
      if (!running) throw new Error('the plugin should have started');
      expect(running.listener.receiver).toBeUndefined();
      expect(hb.captured.text('error')).toMatch(/webhook listener could not start on 127\.0\.0\.1:\d+ .*Choose a free webhook\.listenPort/);
      expect(running.files.status.status.receiver.listening).toBe(false);
      // Nothing can arrive: the delivery watch says so from the start.
      expect(running.files.status.status.delivery?.state).toBe('notArriving');
      await waitFor(() => hb.registered.some((a) => a.displayName === 'Front Door'));
      expect(running.files.status.status.link.state).toBe('linked');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('a shutdown while the start is under way builds nothing more: the listener never opens', async () => {
    const hb = homebridge();
    const starting = startPlugin(hb.context);
    void hb.shutdown.run();
    expect(await starting).toBeUndefined();
    await expect(fetch(`http://127.0.0.1:${bed.port}/lock-access/health`)).rejects.toThrow();
    expect(hb.registered).toEqual([]);
  });

  it('a temporary file that a write cut short by a crash left in the plugin\'s folder is removed at start, with one line saying so', async () => {
    const leftover = join(bed.dir, 'lock-access', 'tokens.json.3805196742');
    await mkdir(join(bed.dir, 'lock-access'), { recursive: true });
    await writeFile(leftover, '{"refreshToken":"half of a');
    const longAgo = new Date(Date.now() - LEFTOVER_AGE_MS - 60_000);
    await utimes(leftover, longAgo, longAgo);
    const hb = homebridge();
    const running = await startPlugin(hb.context);
    if (!running) throw new Error('the plugin should have started');
    await waitFor(() => /Removed a temporary file that an interrupted write left in .*: tokens\.json\.3805196742\./.test(hb.captured.text('info')));
    expect(existsSync(leftover)).toBe(false);
    await waitFor(() => bed.sim.registrations().length === 2);
  });
});

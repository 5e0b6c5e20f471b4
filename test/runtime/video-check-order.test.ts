// Start-up keeps the way to the registrations clear: doorbell video checks ffmpeg (several
// processes, then a camera set up per doorbell) only once the first setup against the account has
// registered the webhooks. In process, on Homebridge's own API, against the simulator.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { API } from 'homebridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { HomebridgeAPI } from '../../node_modules/homebridge/dist/api.js';
import { checkConfig } from '../../src/config.js';
import { startPlugin, type PluginContext } from '../../src/runtime/start-plugin.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../../src/settings.js';
import { Shutdown } from '../../src/util/shutdown.js';
import { captureLog } from '../homekit/hap-env.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simAccountEntry, simPlatformConfig } from '../sim/plugin-config.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';

describe('start-up order of doorbell video', () => {
  let sim: Simulator;
  let dir: string;
  let shutdown: Shutdown;

  beforeEach(async () => {
    shutdown = new Shutdown();
    // Every call takes a while, as a real service's do: the first setup takes well over the time ffmpeg needs to answer.
    sim = await startSimulator({ latencyMs: 150, locks: [{ id: 'L1', name: 'Front Door' }], doorbells: [{ id: 'B1', name: 'Porch' }] });
    dir = await mkdtemp(join(tmpdir(), 'video-check-order-'));
  });
  afterEach(async () => {
    await shutdown.run();
    await sim.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('ffmpeg is checked after the webhooks are registered, and video then works', async () => {
    const port = await freePort();
    const api = new HomebridgeAPI() as unknown as API;
    Object.defineProperty(api, 'user', { value: { storagePath: () => dir } });
    api.registerPlatformAccessories = () => undefined;
    const webhook = { publicUrl: `http://127.0.0.1:${port}/lock-access`, listenHost: '127.0.0.1', listenPort: port, deliveryCheckMinutes: 0 };
    const check = checkConfig(simPlatformConfig(sim, port, { webhook, video: { ffmpegPath: testFfmpeg() } }));
    if (!check.ok) throw new Error('the test config should be valid');
    const captured = captureLog();
    const context: PluginContext = { api, log: captured.log, config: check.config, cachedAccessories: [], cachedMatter: [], pluginName: PLUGIN_NAME, platformName: PLATFORM_NAME, shutdown };
    const running = await startPlugin(context);
    if (!running) throw new Error('the plugin should have started');
    expect(running.views.video.status().state).toBe('checking');

    const info = await running.views.video.ready;
    expect(info?.path).toBe(testFfmpeg());
    const messages = captured.lines.map((line) => line.message);
    const registered = messages.findIndex((message) => message.startsWith('Webhooks: '));
    const checked = messages.findIndex((message) => message.startsWith('Doorbell video uses ffmpeg'));
    expect(registered).toBeGreaterThanOrEqual(0);
    expect(checked).toBeGreaterThan(registered);
    expect(sim.registrations().length).toBe(3);
  });

  it('with several accounts, ffmpeg is checked after every account\'s first setup, not the main account\'s alone', async () => {
    await sim.close();
    // Cabin has more to register than the main account: its first setup ends well after the main one's.
    const cabinLocks = Array.from({ length: 16 }, (_, i) => ({ id: `C${String(i)}`, name: `Cabin Door ${String(i)}`, accounts: ['cabin'] }));
    sim = await startSimulator({ latencyMs: 150, accounts: [{ id: 'cabin', name: 'Cabin' }], locks: [{ id: 'L1', name: 'Front Door' }, ...cabinLocks], doorbells: [{ id: 'B1', name: 'Porch' }] });
    const port = await freePort();
    const api = new HomebridgeAPI() as unknown as API;
    Object.defineProperty(api, 'user', { value: { storagePath: () => dir } });
    api.registerPlatformAccessories = () => undefined;
    const webhook = { publicUrl: `http://127.0.0.1:${port}/lock-access`, listenHost: '127.0.0.1', listenPort: port, deliveryCheckMinutes: 0 };
    const check = checkConfig(simPlatformConfig(sim, port, { webhook, video: { ffmpegPath: testFfmpeg() }, accounts: [simAccountEntry(sim, 'cabin')] }));
    if (!check.ok) throw new Error('the test config should be valid');
    const context: PluginContext = { api, log: captureLog().log, config: check.config, cachedAccessories: [], cachedMatter: [], pluginName: PLUGIN_NAME, platformName: PLATFORM_NAME, shutdown };
    const started = performance.now();
    const running = await startPlugin(context);
    if (!running) throw new Error('the plugin should have started');
    await running.views.video.ready;
    const waited = performance.now() - started;
    // Every registration of both accounts was made before the check began, unless the setups took
    // longer than the check waits for them (10 s; a machine so busy that a 2 s setup took 10 s).
    const cabin = sim.registrations().filter((r) => r.account === 'cabin').length;
    expect(cabin === 17 || waited >= 10_000, `Cabin had ${String(cabin)} of 17 registrations when video was ready, ${String(Math.round(waited))} ms after start`).toBe(true);
  });
});

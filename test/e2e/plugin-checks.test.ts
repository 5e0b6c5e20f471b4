// the Homebridge verified-plugin checks, each as a test against a real Homebridge
// running the built plugin. The README's Development section lists them with their status.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { freePort, REPO_ROOT, startHomebridge, type HomebridgeOptions, type RunningHomebridge } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { testFfmpeg } from '../video/ffmpeg-binary.js';

const running: RunningHomebridge[] = [];
const sims: Simulator[] = [];
const scratch: string[] = [];

afterEach(async () => {
  for (const hb of running.splice(0)) {
    await hb.stop();
    await hb.cleanup();
  }
  for (const sim of sims.splice(0)) await sim.close();
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function start(options: HomebridgeOptions): Promise<RunningHomebridge> {
  const hb = await startHomebridge(options);
  running.push(hb);
  return hb;
}

async function simulator(): Promise<Simulator> {
  const sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }], doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }] });
  sims.push(sim);
  return sim;
}

const HOMEBRIDGE_UP = /Homebridge v\S+ .*is running on port/;
/** What a crash or a careless plugin leaves in the log. */
const TROUBLE = /Unhandled|uncaught|TypeError|ReferenceError|SyntaxError|RangeError|EADDRINUSE|EACCES|EROFS|EPERM|\bat .+\.js:\d+/i;

/** Stops Homebridge with SIGTERM; fails when it needed SIGKILL, that is, took longer than `graceMs`. */
async function expectCleanExit(hb: RunningHomebridge, graceMs = 12_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const end = await hb.stop(graceMs);
  expect(end.signal, `Homebridge did not exit within ${graceMs} ms of SIGTERM`).not.toBe('SIGKILL');
  return end;
}

describe('verified-plugin checks', () => {
  it('check 1: with no platform block the plugin stays unloaded: no error, no listener, no files', async () => {
    const hb = await start({ platforms: [] });
    await hb.waitForLog(HOMEBRIDGE_UP);
    expect(hb.logs.join('\n')).not.toMatch(TROUBLE);
    expect(hb.logs.filter((line) => line.includes('[Lock Access]'))).toEqual([]);
    expect(hb.logs.join('\n')).not.toMatch(/Webhook listener/);
    expect(existsSync(join(hb.storagePath, 'lock-access'))).toBe(false);
    await expectCleanExit(hb);
  });

  it('check 2: with the platform-only block ({"platform": "LockAccess"}) it says what is missing once and does nothing else', async () => {
    const hb = await start({ platforms: [{ platform: 'LockAccess' }] });
    const line = await hb.waitForLog(/Lock Access is not configured/);
    expect(line).toContain('apiKey, clientId, clientSecret, baseUrl, authUrl, webhook.publicUrl');
    await hb.waitForLog(HOMEBRIDGE_UP);
    expect(hb.logs.filter((line) => line.includes('Lock Access is not configured'))).toHaveLength(1);
    expect(hb.logs.join('\n')).not.toMatch(/Webhook listener|listening/i);
    expect(existsSync(join(hb.storagePath, 'lock-access'))).toBe(false);
    expect(hb.running).toBe(true);
    expect(hb.logs.join('\n')).not.toMatch(TROUBLE);
    const end = await expectCleanExit(hb);
    expect(end.signal === 'SIGTERM' || end.code === 0 || end.code === 143).toBe(true);
    expect(hb.logs.join('\n')).not.toMatch(/Error: |Unhandled|TypeError/);
  });

  it('check 3: with a minimal config (the required fields only) it starts, waits to be linked, and serves its listener', async () => {
    const sim = await simulator();
    const listenPort = await freePort();
    // Required fields; the listener port only because 8582 may be taken on a shared test machine.
    const hb = await start({
      platforms: [{
        platform: 'LockAccess', apiKey: sim.account.apiKey, clientId: sim.account.clientId, clientSecret: sim.account.clientSecret,
        baseUrl: sim.baseUrl, authUrl: sim.authUrl, webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenPort },
      }],
    });
    await hb.waitForLog(/Webhook listener ready/);
    await hb.waitForLog(HOMEBRIDGE_UP);
    const health = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`);
    expect(health.status).toBe(200);
    expect(sim.registrations()).toEqual([]);
    expect(hb.logs.join('\n')).not.toMatch(TROUBLE);
    await expectCleanExit(hb);
  });

  it('check 4: with a full config (every field of config.schema.json but the TLS files and the tunnel) it links, registers and serves', async () => {
    const schema = JSON.parse(await readFile(join(REPO_ROOT, 'config.schema.json'), 'utf8')) as { schema: { properties: Record<string, { properties?: Record<string, unknown> }> } };
    const sim = await simulator();
    const listenPort = await freePort();
    const block = simPlatformConfig(sim, listenPort, {
      accessToken: sim.mintAccessToken(),
      webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort, toleranceSeconds: 120, deliveryCheckMinutes: 360, deliverySensor: true },
      locks: [{ id: 'LOCK-1', name: 'Porch', doorSensor: true, doorSensorOnly: false, hidden: false }, { id: 'LOCK-GONE', hidden: true }],
      people: [{ userId: 'USER-JAMIE', name: 'Jamie' }],
      doorbells: [{ id: 'BELL-1', name: 'Porch Bell', motionTimeoutSeconds: 5, hidden: false }],
      userWebhook: true,
      discoverDevices: true,
      refreshStateOnStart: true,
      // Matter is not on for this bridge: the option is read and nothing else happens.
      matter: true,
      video: { ffmpegPath: testFfmpeg(), replayMinutes: 30, secureVideo: true },
      // No extra account: an empty list is the single account, as before (several accounts have tests of their own).
      accounts: [],
    });
    // The test covers the schema: a field added there must be added here too.
    const missing = Object.keys(schema.schema.properties).filter((key) => !(key in block));
    const webhook = block.webhook as Record<string, unknown>;
    // The TLS files need a certificate, and a tunnel would replace the public address (the real
    // SDK's offline failure has its own test, tunnel-offline).
    const missingWebhook = Object.keys(schema.schema.properties.webhook?.properties ?? {}).filter((key) => !(key in webhook) && !/^tls|^tunnel$/.test(key));
    const video = block.video as Record<string, unknown>;
    const missingVideo = Object.keys(schema.schema.properties.video?.properties ?? {}).filter((key) => !(key in video));
    expect([...missing, ...missingWebhook, ...missingVideo]).toEqual([]);
    const hb = await start({ platforms: [block] });
    await hb.waitForLog(/Webhook listener ready/);
    await expect.poll(() => sim.registrations().map((r) => `${r.kind}:${r.scope}`).sort(), { timeout: 30_000, interval: 200 }).toEqual(['doorbell:BELL-1', 'lock:LOCK-1', `user:${sim.account.userId}`]);
    await hb.waitForLog(/Self-check passed/);
    // The video settings are read: the configured ffmpeg works, and the status file says so.
    await expect.poll(async () => {
      const status = JSON.parse(await readFile(join(hb.storagePath, 'lock-access', 'status.json'), 'utf8').catch(() => '{}')) as { video?: unknown };
      return status.video;
    }, { timeout: 30_000, interval: 200 }).toMatchObject({ state: 'ready', ffmpegPath: testFfmpeg(), replayMinutes: 30, secureVideo: true });
    expect(hb.logs.join('\n')).not.toMatch(/Doorbell video is off/);
    expect(hb.logs.join('\n')).not.toMatch(TROUBLE);
    await expectCleanExit(hb);
  });

  it('check 5: with the service unreachable it keeps running, serves its listener, says so in words (no secret), and stops cleanly', async () => {
    const listenPort = await freePort();
    const hb = await start({
      platforms: [{
        platform: 'LockAccess', apiKey: 'checks-api-key-0123456789', clientId: 'checks-client', clientSecret: 'checks-client-secret-0123456789',
        refreshToken: 'checks-refresh-token-0123456789', baseUrl: 'http://127.0.0.1:9/api', authUrl: 'http://127.0.0.1:9/oauth',
        webhook: { publicUrl: `http://127.0.0.1:${listenPort}/lock-access`, listenHost: '127.0.0.1', listenPort },
        locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
        discoverDevices: true,
      }],
    });
    await hb.waitForLog(/Webhook listener ready on 127\.0\.0\.1:/);
    await hb.waitForLog(HOMEBRIDGE_UP);
    const health = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    await hb.waitForLog(/could not|cannot|not reach|unreachable|failed/i);
    expect(hb.running).toBe(true);
    const text = hb.logs.join('\n');
    for (const secret of ['checks-api-key-0123456789', 'checks-client-secret-0123456789', 'checks-refresh-token-0123456789']) expect(text).not.toContain(secret);
    expect(text).not.toMatch(TROUBLE);
    await expectCleanExit(hb);
    expect(hb.logs.join('\n')).not.toMatch(/Unhandled|TypeError|ReferenceError/);
  });

  it('check 6: Homebridge exits within 12 s of SIGTERM while the plugin is busy (callbacks in flight, a registration retrying)', async () => {
    const sim = await simulator();
    const listenPort = await freePort();
    // The lock's registration fails with 503 until the end: the plugin keeps retrying it.
    sim.faults.failNext(1000, 503, 'POST /webhook/:lockID');
    const hb = await start({ platforms: [simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1' }], refreshStateOnStart: false })] });
    await hb.waitForLog(/Webhook listener ready/);
    await expect.poll(() => sim.registrations().some((r) => r.kind === 'user'), { timeout: 30_000, interval: 200 }).toBe(true);
    await expect.poll(() => (sim.state() as { faults: { entries: { remaining: number }[] } }).faults.entries[0]?.remaining ?? 0, { timeout: 30_000, interval: 200 }).toBeLessThan(1000);
    // Callbacks in flight when the signal comes.
    const inFlight = Array.from({ length: 40 }, (_, i) => sim.fire(i % 2 === 0 ? 'unlock' : 'lock', { lockId: 'LOCK-1', by: 'keypad' }).catch(() => []));
    await expectCleanExit(hb, 12_000);
    await Promise.all(inFlight);
    expect(hb.logs.join('\n')).not.toMatch(/Unhandled|uncaught|TypeError|ReferenceError/i);
  });

  it('check 7: a restart on the same ports hits no EADDRINUSE', async () => {
    const sim = await simulator();
    const listenPort = await freePort();
    const options: HomebridgeOptions = { platforms: [simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1' }] })] };
    const first = await start(options);
    await first.waitForLog(/Webhook listener ready/);
    await first.waitForLog(HOMEBRIDGE_UP);
    // Connections open on both ports when the restart comes, as a paired Home hub and the service would have.
    const kept = await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`, { keepalive: true });
    expect(kept.status).toBe(200);
    await expectCleanExit(first);
    const second = await start({ ...options, storagePath: first.storagePath, bridgePort: first.bridgePort, username: first.username });
    await second.waitForLog(/Webhook listener ready/);
    await second.waitForLog(HOMEBRIDGE_UP);
    expect(second.logs.join('\n')).not.toMatch(/EADDRINUSE|already in use|could not start/);
    expect((await fetch(`http://127.0.0.1:${listenPort}/lock-access/health`)).status).toBe(200);
    await expectCleanExit(second);
  });

  it.skipIf(process.getuid?.() !== 0)('check 8: writes only inside the Homebridge storage folder (read-only home, scratch storage, unprivileged user)', async () => {
    // As root no file mode stops a write, so Homebridge runs as an unused uid: it can write only to
    // its storage folder and to world-writable places, and every file it makes carries that uid.
    // Its own uid per test run: other runs of this check on the same machine (their files are in
    // /tmp too) must not count as this Homebridge's writes.
    const uid = 60_000 + (process.pid % 5_000);
    const root = await mkdtemp(join(tmpdir(), 'lock-access-checks-'));
    scratch.push(root);
    await chmod(root, 0o755);
    const home = join(root, 'home');
    const storage = join(root, 'storage');
    await mkdir(home, { mode: 0o555 });
    await mkdir(storage);
    await chown(storage, uid, uid);
    const sim = await simulator();
    const listenPort = await freePort();
    const hb = await start({
      storagePath: storage,
      uid,
      gid: uid,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
      platforms: [simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1', name: 'Front Door' }], doorbells: [{ id: 'BELL-1' }] })],
    });
    await hb.waitForLog(/Webhook listener ready/);
    await expect.poll(() => sim.registrations().length, { timeout: 30_000, interval: 200 }).toBe(3);
    await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await sim.fire('doorbell-press', { doorbellId: 'BELL-1' });
    await hb.waitForLog(/Front Door: Unlocked/);
    await expectCleanExit(hb);
    // Its own files are all in storage/lock-access (plus Homebridge's own folders).
    expect(existsSync(join(storage, 'lock-access', 'tokens.json'))).toBe(true);
    expect(await readdir(home)).toEqual([]);
    // Other tests create and delete temp files meanwhile, so find may complain (exit 1) about vanished ones.
    const elsewhere = spawnSync('find', ['/tmp', '/var/tmp', '/dev/shm', '-xdev', '-user', String(uid), '-not', '-path', `${storage}*`], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((line) => line !== '');
    expect(elsewhere).toEqual([]);
    expect(hb.logs.join('\n')).not.toMatch(TROUBLE);
  }, 90_000);

  it('check 9: no analytics: the only connections the process opens go to the configured service and its own listener', async () => {
    const sim = await simulator();
    const listenPort = await freePort();
    const root = await mkdtemp(join(tmpdir(), 'lock-access-checks-'));
    scratch.push(root);
    const connections = join(root, 'connections.log');
    const hb = await start({
      nodeArgs: ['--import', new URL('../harness/connect-probe.mjs', import.meta.url).href],
      env: { LOCK_ACCESS_CONNECT_LOG: connections },
      platforms: [simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1', name: 'Front Door' }], doorbells: [{ id: 'BELL-1' }] })],
    });
    await hb.waitForLog(/Webhook listener ready/);
    await hb.waitForLog(/Self-check passed/);
    await expect.poll(() => sim.registrations().length, { timeout: 30_000, interval: 200 }).toBe(3);
    await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
    await sim.fire('motion', { doorbellId: 'BELL-1' });
    await hb.waitForLog(/Front Door: Unlocked/);
    await expectCleanExit(hb);
    const simPort = new URL(sim.url).port;
    const targets = new Set((await readFile(connections, 'utf8')).split('\n').filter((line) => line !== ''));
    // The probe works: the plugin's own calls to the simulator are in the log.
    expect(targets).toContain(`tcp 127.0.0.1:${simPort}`);
    const allowed = new Set([`tcp 127.0.0.1:${simPort}`, `tcp 127.0.0.1:${listenPort}`,
      // Homebridge's own mDNS advertisement (HAP), not the plugin's.
      'udp 224.0.0.251:5353', 'udp ff02::fb:5353']);
    expect([...targets].filter((target) => !allowed.has(target) && !/^udp .*:5353$/.test(target))).toEqual([]);
  });
});

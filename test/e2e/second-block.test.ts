// A second LockAccess block on the same storage, end to end: two child bridges of one real
// Homebridge, each with a copy of the block (the same listener port) and an account of its own on
// the simulator. Whichever takes lock-access/instance.lock first runs; the other logs one error,
// opens no listener, sends no request and publishes nothing. A killed child bridge's lock is taken
// over when Homebridge starts it again, and a stopped Homebridge leaves no lock behind.
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort, STARTED, startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';
import { startSimulator, type Simulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const SECOND_BLOCK = /Another Lock Access block already runs on this storage \(.*lock-access, process (\d+)\), so this block does nothing: one block serves several accounts\. Move this block's account into "accounts" of that block .* and remove this block\./;
const LISTENER = /Webhook listener ready on 127\.0\.0\.1:\d+/;
const NAMES = { main: 'Lock Access', cabin: 'Lock Access Cabin' } as const;
const USERNAMES = { main: '0E:2A:2B:3C:4D:01', cabin: '0E:2A:2B:3C:4D:02' } as const;
type Block = keyof typeof NAMES;

let sim: Simulator;
let hb: RunningHomebridge | undefined;
let storagePath = '';

function running(): RunningHomebridge {
  if (!hb) throw new Error('Homebridge is not running');
  return hb;
}

const lines = (pattern: RegExp): string[] => running().logs.filter((l) => pattern.test(l));
/** Which block logged the line, from Homebridge's `[name]` prefix. */
const blockOf = (line: string): Block => (line.includes(`[${NAMES.cabin}]`) ? 'cabin' : 'main');
const other = (block: Block): Block => (block === 'main' ? 'cabin' : 'main');

async function lockOwnerPid(): Promise<number | undefined> {
  try {
    return (JSON.parse(await readFile(join(storagePath, 'lock-access', 'instance.lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  sim = await startSimulator({
    accounts: [{ id: 'cabin', name: 'Cabin' }],
    locks: [{ id: 'LOCK-1', name: 'Front Door' }, { id: 'LOCK-CABIN', name: 'Cabin Door', accounts: ['cabin'] }],
  });
  const listenPort = await freePort();
  const cabin = sim.accountOf('cabin');
  // The user copied the block for a second home: same listener, the other account's credentials.
  const block = (which: Block, extra: Record<string, unknown>) => simPlatformConfig(sim, listenPort, {
    name: NAMES[which], discoverDevices: true, refreshStateOnStart: false,
    _bridge: { username: USERNAMES[which], port: 0, name: `${NAMES[which]} Child` }, ...extra,
  });
  const platforms = [
    block('main', {}),
    block('cabin', { apiKey: cabin.apiKey, clientId: cabin.clientId, clientSecret: cabin.clientSecret, refreshToken: cabin.refreshToken }),
  ];
  for (const platform of platforms) (platform._bridge as { port: number }).port = await freePort();
  hb = await startHomebridge({ platforms });
  storagePath = hb.storagePath;
  await hb.waitForLog(STARTED, 60_000);
  await hb.waitForLog(SECOND_BLOCK, 60_000);
}, 120_000);

afterAll(async () => {
  await hb?.stop(15_000);
  await hb?.cleanup();
  await sim.close();
});

describe('a second LockAccess block on the same storage (two child bridges)', () => {
  it('one block runs; the other logs one error naming the fix, opens no listener and sends no request', async () => {
    const winner = blockOf(lines(STARTED)[0] ?? '');
    const loser = other(winner);
    const errors = lines(SECOND_BLOCK);
    expect(errors).toHaveLength(1);
    expect(blockOf(errors[0] ?? '')).toBe(loser);
    expect(lines(STARTED).map(blockOf)).toEqual([winner]);
    expect(lines(LISTENER)).toHaveLength(1);
    expect(running().logs.join('\n')).not.toMatch(/EADDRINUSE|already in use|could not start/);
    // The running block's account registered its lock; the idle one's account was never asked anything.
    const winnerLock = winner === 'main' ? 'LOCK-1' : 'LOCK-CABIN';
    await expect.poll(() => sim.registrations().map((r) => r.scope), { timeout: 30_000, interval: 200 }).toContain(winnerLock);
    expect(sim.stats.accounts[winner]?.apiCalls).toBeGreaterThan(0);
    expect(sim.stats.accounts[loser]).toMatchObject({ grants: 0, codeGrants: 0, apiCalls: 0 });
    // The error names the process that holds the lock: the running block's.
    expect(Number(SECOND_BLOCK.exec(errors[0] ?? '')?.[1])).toBe(await lockOwnerPid());
    expect(running().logs.filter((l) => l.includes(`[${NAMES[loser]}]`)).join('\n')).not.toMatch(/Webhook listener|Webhooks:|Self-check|Started:|not linked|linking|Added to HomeKit/);
  });

  it('a killed child bridge\'s lock is taken over when Homebridge starts it again; the idle block stays idle', async () => {
    const winner = blockOf(lines(STARTED)[0] ?? '');
    const pid = await lockOwnerPid();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid ?? 0, 'SIGKILL');
    await expect.poll(() => lines(STARTED).length, { timeout: 60_000, interval: 200 }).toBe(2);
    expect(lines(STARTED).map(blockOf)).toEqual([winner, winner]);
    expect(lines(LISTENER)).toHaveLength(2);
    expect(lines(SECOND_BLOCK)).toHaveLength(1);
    const now = await lockOwnerPid();
    expect(now).not.toBe(pid);
    expect(now).toBeGreaterThan(0);
  }, 90_000);

  it('the idle block published nothing, and a stopped Homebridge leaves no instance lock behind', async () => {
    const loser = other(blockOf(lines(STARTED)[0] ?? ''));
    await running().stop(15_000);
    await expect(access(join(storagePath, 'lock-access', 'instance.lock'))).rejects.toThrow(/ENOENT/);
    const cached = async (which: Block): Promise<unknown[]> => {
      try {
        return JSON.parse(await readFile(join(storagePath, 'accessories', `cachedAccessories.${USERNAMES[which].replace(/:/g, '').toUpperCase()}`), 'utf8')) as unknown[];
      } catch {
        return [];
      }
    };
    expect(await cached(other(loser))).not.toEqual([]);
    expect(await cached(loser)).toEqual([]);
  }, 60_000);
});

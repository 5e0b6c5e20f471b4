// Crash safety and cross-process single flight, proven with real processes: a token manager in a
// child process (test/fixtures/token-child.ts) is SIGKILLed at each step of a refresh grant, and
// a restarted manager must still hold a working token.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { Storage } from '../../../src/storage.js';
import type { TokenManager } from '../../../src/cloud/tokens/token-manager.js';
import { startSimulator, type Simulator } from '../../sim/index.js';
import { captureLog, managerFor, readTokens, tempDir, tokenWorks, type CapturedLog } from '../../fixtures/token-harness.js';
import { tsChildArgs } from '../../harness/ts-child.js';

// node with tsx's loader: the same as node_modules/.bin/tsx, minus the wrapper process tsx puts in
// between, so SIGKILL and signals reach the process that runs the manager.
const CHILD = join(process.cwd(), 'test/fixtures/token-child.ts');

interface ChildMessage {
  event: 'ready' | 'paused' | 'done';
  step?: string;
  ok?: boolean;
  error?: string;
  pid?: number;
}

interface Child {
  process: ChildProcess;
  /** The pid of the process that runs the manager (tsx starts it as its own child). */
  pid?: number;
  next(event: ChildMessage['event']): Promise<ChildMessage>;
  exited: Promise<void>;
  stderr: string[];
}

let sim: Simulator;
let dir: string;
let cleanup: () => Promise<void>;
let storage: Storage;
let log: CapturedLog;
const children: Child[] = [];
/** Node's arguments that run the child (bundled once, see tsChildArgs). */
let childArgs: string[] = [];
const managers: TokenManager[] = [];

function startChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, childArgs, {
    env: {
      ...process.env,
      TC_STORAGE: storage.dir,
      TC_AUTH_URL: sim.authUrl,
      TC_BASE_URL: sim.baseUrl,
      TC_API_KEY: sim.account.apiKey,
      TC_CLIENT_ID: sim.account.clientId,
      TC_CLIENT_SECRET: sim.account.clientSecret,
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: ChildMessage[] = [];
  const waiters: { event: string; resolve: (m: ChildMessage) => void }[] = [];
  const stderr: string[] = [];
  const exited = new Promise<void>((resolve) => child.on('exit', () => {
    resolve();
  }));
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: ChildMessage;
    try {
      message = JSON.parse(line) as ChildMessage;
    } catch {
      return;
    }
    if (message.pid !== undefined) handle.pid = message.pid;
    const waiter = waiters.find((w) => w.event === message.event);
    if (waiter) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    } else {
      messages.push(message);
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const handle: Child = {
    process: child,
    stderr,
    exited,
    next: (event) => {
      const index = messages.findIndex((m) => m.event === event);
      if (index >= 0) return Promise.resolve(messages.splice(index, 1)[0] as ChildMessage);
      return new Promise<ChildMessage>((resolve, reject) => {
        const waiter = { event, resolve };
        waiters.push(waiter);
        void exited.then(() => {
          setTimeout(() => {
            if (waiters.includes(waiter)) reject(new Error(`child exited (${String(child.exitCode)}/${String(child.signalCode)}) before "${event}": ${stderr.join(' | ')}`));
          }, 200);
        });
      });
    },
  };
  children.push(handle);
  return handle;
}

async function kill(child: Child): Promise<void> {
  if (child.pid !== undefined) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  child.process.kill('SIGKILL');
  await child.exited;
}

/** A linked store (seed spent once), as the plugin leaves it. */
async function linkedStore(): Promise<void> {
  const first = managerFor(sim, storage, log, { seeds: { refreshToken: sim.issueRefreshToken() } });
  await first.start();
  first.stop();
  await first.settled();
}

function restarted(): TokenManager {
  const m = managerFor(sim, storage, log);
  managers.push(m);
  return m;
}

beforeAll(async () => {
  childArgs = await tsChildArgs(CHILD);
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  storage = new Storage(join(dir, 'lock-access'));
  log = captureLog();
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.process.exitCode === null && child.process.signalCode === null) await kill(child);
  }
  for (const m of managers.splice(0)) {
    m.stop();
    await m.settled();
  }
  await cleanup();
});

describe('SIGKILL at each step of a refresh, then restart', () => {
  const cases = [
    { step: 'markerWritten', rotated: false, what: 'before the request' },
    { step: 'responseReceived', rotated: true, what: 'after the server rotated (headers arrived, body unread)' },
    { step: 'responseRead', rotated: true, what: 'after the response arrived, before the write' },
    { step: 'duringWrite', rotated: true, what: 'during the write (temp file fsynced, not yet renamed)' },
  ] as const;

  for (const { step, rotated, what } of cases) {
    it(`killed ${what}: the restarted manager holds a working token and says plainly the refresh token may be spent`, async () => {
      await linkedStore();
      const before = await readTokens(storage);
      const grants = sim.stats.grants;
      const child = startChild({ TC_PAUSE_AT: step });
      expect((await child.next('paused')).step).toBe(step);
      await kill(child);
      expect(sim.stats.grants - grants).toBe(rotated ? 1 : 0);
      if (rotated) expect(sim.refreshTokenState(before?.refreshToken ?? '')).toBe('used');

      const m = restarted();
      expect(await m.start()).toBe('linked');
      expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
      const after = await readTokens(storage);
      expect(after?.refreshInFlight).toBeUndefined();
      expect(after?.refreshToken).toBeUndefined();
      expect(after?.refreshTokenLost).toBe('uncertain');
      expect(m.status().message).toContain('The service may have replaced the refresh token without the plugin receiving the new one');
      expect(log.text('warn').some((line) => line.includes('never be sent again'))).toBe(true);
      // The possibly spent token is never sent again.
      const sent = sim.stats.byRoute['POST /oauth/access_token'];
      await expect(m.refreshNow()).rejects.toThrow(/no unused refresh token/);
      expect(sim.stats.byRoute['POST /oauth/access_token']).toBe(sent);
    });
  }

  it('killed after the new tokens were written, before validation: the restart validates them and keeps renewing', async () => {
    await linkedStore();
    const before = await readTokens(storage);
    const child = startChild({ TC_PAUSE_AT: 'tokensWritten' });
    await child.next('paused');
    await kill(child);
    const written = await readTokens(storage);
    expect(written?.refreshToken).not.toBe(before?.refreshToken);
    expect(written?.pendingAccessToken).toBeDefined();

    const m = restarted();
    expect(await m.start()).toBe('linked');
    const after = await readTokens(storage);
    expect(after?.pendingAccessToken).toBeUndefined();
    expect(after?.accessToken).toBe(written?.pendingAccessToken?.token);
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    expect(m.status().message).toBeUndefined();
    const grants = sim.stats.grants;
    await m.refreshNow();
    expect(sim.stats.grants).toBe(grants + 1);
  });
});

describe('"two processes refreshing at once cause exactly one grant"', () => {
  it('the second process waits for the lock, sees the rotation in the store and uses those tokens', async () => {
    await linkedStore();
    const grants = sim.stats.grants;
    const a = startChild({ TC_WAIT_GO: '1' });
    const b = startChild({ TC_WAIT_GO: '1' });
    await Promise.all([a.next('ready'), b.next('ready')]);
    process.kill(a.pid ?? 0, 'SIGUSR2');
    process.kill(b.pid ?? 0, 'SIGUSR2');
    const [doneA, doneB] = await Promise.all([a.next('done'), b.next('done')]);
    expect([doneA.ok, doneB.ok]).toEqual([true, true]);
    expect(sim.stats.grants - grants).toBe(1);
    const m = restarted();
    await m.start();
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    expect(sim.refreshTokenState((await readTokens(storage))?.refreshToken ?? '')).toBe('issued');
    expect([...a.stderr, ...b.stderr].some((line) => line.includes('another process renewed the tokens'))).toBe(true);
  });
});

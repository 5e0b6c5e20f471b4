// A storage fault right after a successful grant never loses the new tokens: the service has
// already used the old refresh token, so the new one exists only in memory. It stays in use, the
// write is retried with back-off until it succeeds, and the warning and the status say the tokens
// are not saved yet and why. Faults are injected at each step: the write-ahead of the new refresh
// token, the final save after the check, and the lock taken by the retry.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { TransientError } from '../../../src/cloud/http/errors.js';
import { TOKENS_FILE } from '../../../src/storage/token-file.js';
import { SAVE_RETRY_FIRST_MS } from '../../../src/cloud/tokens/token-writes.js';
import { SteppedStorage, type RefreshStep } from '../../fixtures/refresh-steps.js';
import { readTokens, tokenTestBed, tokenWorks } from '../../fixtures/token-harness.js';

const bed = tokenTestBed();

function fault(code: string): Error {
  return Object.assign(new Error(`${code}: simulated storage fault, write`), { code });
}

/**
 * Real storage whose token writes, or whose folder (and so the lock), fail while armed; its hook
 * hears the refresh's steps as its writes show them (test/fixtures/refresh-steps.ts).
 */
class FaultyStorage extends SteppedStorage {
  writeFault: string | undefined;
  folderFault: string | undefined;

  protected override async writeNow(name: string, value: unknown, options?: { compact?: boolean }): Promise<void> {
    if (name === TOKENS_FILE && this.writeFault !== undefined) throw fault(this.writeFault);
    await super.writeNow(name, value, options);
  }

  override ensureDir(): Promise<void> {
    if (this.folderFault !== undefined) return Promise.reject(fault(this.folderFault));
    return super.ensureDir();
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function linkedManager(onStep: (step: RefreshStep, storage: FaultyStorage) => void = () => undefined) {
  const { sim } = await bed.boot();
  const storage: FaultyStorage = new FaultyStorage(`${bed.dir}/faulty`, (step) => {
    onStep(step, storage);
  });
  const m = bed.manager({ seeds: { refreshToken: sim.issueRefreshToken() } }, storage);
  await m.start();
  const before = (await readTokens(storage))?.refreshToken ?? '';
  return { sim, storage, m, before };
}

describe('tokens are never lost to a storage fault after a grant', () => {
  it('the write-ahead of the new refresh token fails (disk full): the new tokens stay in use and are saved once the disk recovers', async () => {
    let arm = false;
    const { sim, storage, m, before } = await linkedManager((step, s) => {
      if (arm && step === 'responseRead') s.writeFault = 'ENOSPC';
    });
    arm = true;
    await m.refreshNow(); // does not throw: the grant worked
    expect(sim.refreshTokenState(before)).toBe('used');
    const access = await m.getAccessToken();
    expect(await tokenWorks(sim, access)).toBe(true);
    const status = m.status();
    expect(status.problem).toBe('notSaved');
    expect(status.message).toContain('not saved yet');
    expect(status.message).toContain('ENOSPC');
    expect(bed.log.text('warn').filter((l) => l.includes('not saved yet'))).toHaveLength(1);
    // The disk still has the grant's starting point; the new token is only in memory.
    expect((await readTokens(storage))?.refreshToken).toBe(before);

    // A later renewal never sends the used token: it first has to save the new one.
    const grants = sim.stats.grants;
    await expect(m.refreshNow()).rejects.toBeInstanceOf(TransientError);
    expect(sim.stats.grants).toBe(grants);

    // Still failing at the first retry, then the disk recovers.
    await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
    await m.settled();
    expect(m.status().problem).toBe('notSaved');
    storage.writeFault = undefined;
    await vi.advanceTimersByTimeAsync(2 * SAVE_RETRY_FIRST_MS);
    await m.settled();
    const saved = await readTokens(storage);
    expect(saved?.refreshToken).not.toBe(before);
    expect(saved?.refreshInFlight).toBeUndefined();
    expect(sim.refreshTokenState(saved?.refreshToken ?? '')).toBe('issued');
    expect(m.status().problem).toBeUndefined();
    expect(bed.log.text('info').some((l) => l.includes('saved now'))).toBe(true);

    // A restart uses the saved token.
    m.stop();
    const next = bed.manager({}, storage);
    await next.start();
    await next.refreshNow();
    expect(sim.refreshTokenState(saved?.refreshToken ?? '')).toBe('used');
  });

  it('the final save after the check fails (read-only file system): the checked access token stays in use, then is saved', async () => {
    let arm = false;
    const { sim, storage, m, before } = await linkedManager((step, s) => {
      if (arm && step === 'tokensWritten') s.writeFault = 'EROFS';
    });
    arm = true;
    await m.refreshNow();
    const onDisk = await readTokens(storage);
    // The new refresh token made it; the checked access token did not.
    expect(onDisk?.refreshToken).not.toBe(before);
    expect(onDisk?.pendingAccessToken).toBeDefined();
    expect(m.status()).toMatchObject({ problem: 'notSaved' });
    expect(m.status().message).toContain('EROFS');
    expect(await tokenWorks(sim, await m.getAccessToken())).toBe(true);
    storage.writeFault = undefined;
    await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
    await m.settled();
    const saved = await readTokens(storage);
    expect(saved?.pendingAccessToken).toBeUndefined();
    expect(saved?.accessToken).toBeDefined();
    expect(m.status().problem).toBeUndefined();
  });

  it('the retry cannot even take the file lock (I/O error on the folder): it keeps retrying with back-off and says why', async () => {
    let arm = false;
    const { sim, storage, m, before } = await linkedManager((step, s) => {
      if (arm && step === 'responseRead') s.writeFault = 'EIO';
    });
    arm = true;
    await m.refreshNow();
    storage.folderFault = 'EACCES';
    await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
    await m.settled();
    // The new reason is shown and logged.
    expect(m.status().message).toContain('EACCES');
    expect(bed.log.text('warn').filter((l) => l.includes('not saved yet'))).toHaveLength(2);
    storage.folderFault = undefined;
    storage.writeFault = undefined;
    // Back-off: the second retry comes twice as late.
    await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
    await m.settled();
    expect((await readTokens(storage))?.refreshToken).toBe(before);
    await vi.advanceTimersByTimeAsync(SAVE_RETRY_FIRST_MS);
    await m.settled();
    const saved = await readTokens(storage);
    expect(saved?.refreshToken).not.toBe(before);
    expect(sim.refreshTokenState(saved?.refreshToken ?? '')).toBe('issued');
    expect(m.status().problem).toBeUndefined();
  });

  it('an unlink while the tokens wait to be saved wins: nothing writes them back', async () => {
    let arm = false;
    const { storage, m } = await linkedManager((step, s) => {
      if (arm && step === 'responseRead') s.writeFault = 'ENOSPC';
    });
    arm = true;
    await m.refreshNow();
    storage.writeFault = undefined;
    await m.unlink();
    await vi.advanceTimersByTimeAsync(10 * SAVE_RETRY_FIRST_MS);
    await m.settled();
    const onDisk = await readTokens(storage);
    expect(onDisk?.state).toBe('unlinked');
    expect(onDisk?.refreshToken).toBeUndefined();
    expect(m.state).toBe('unlinked');
  });
});

// webhook-secret.json through the real Storage on a real folder, with a write fault injected where the
// file system answers: a brand-new token that cannot be saved at start never stops the start.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { WEBHOOK_SECRET_FILE, WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import { Storage } from '../../../src/storage.js';
import { recordingLog } from '../../callbacks/helpers.js';
import { clearFsFaults, fsFaults } from '../../fixtures/fs-faults.js';
import { ALL_HOOKS, registrarTestBed } from './registrar-harness.js';

vi.mock('write-file-atomic', async (real) => (await import('../../fixtures/fs-faults.js')).faultyWriteFileAtomic(await real()));

describe('a brand-new webhook token that cannot be saved at start', () => {
  let dir: string;
  let storage: Storage;
  let secret: WebhookSecret | undefined;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    clearFsFaults();
    dir = await mkdtemp(join(tmpdir(), 'secret-faults-'));
    storage = new Storage(dir);
  });
  afterEach(async () => {
    secret?.stop();
    secret = undefined;
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  it('the start goes on and the log says so; nothing is registered with it until it is saved; the write is tried again on its own', async () => {
    fsFaults.write.set(WEBHOOK_SECRET_FILE, ['ENOSPC', 'EIO']);
    const { log, lines } = recordingLog();
    secret = await WebhookSecret.load(storage, { log });
    expect(lines.join('\n')).toMatch(/new webhook token could not be saved .*ENOSPC.*webhooks are registered once it is saved/);
    // Not registered, and no callback can carry it yet: the receiver answers "try again later".
    expect(secret.token).toBeUndefined();
    expect(() => secret?.registeredToken).toThrow(/not saved yet/);
    const changed = vi.fn();
    secret.onChange(changed);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(changed).not.toHaveBeenCalled();
    // The file system answers in real time: each look lets the waits run on until the write is through
    // (on a loaded machine that can take more than waitFor's default second).
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(changed).toHaveBeenCalledTimes(1);
    }, { timeout: 15_000 });
    const saved = JSON.parse(readFileSync(join(dir, WEBHOOK_SECRET_FILE), 'utf8')) as { token: string; generation: number };
    expect(saved.token).toBe(secret.registeredToken);
    expect(saved.generation).toBe(1);
    expect(lines.join('\n')).toMatch(/webhook token is saved now; webhooks are registered/);
    expect(lines.join('\n')).not.toContain(saved.token);
  });
});

describe('webhooks are registered only with a token that is saved', () => {
  const bed = registrarTestBed();

  it('while the new token is not saved nothing is registered; once it is, every webhook carries the saved token', async () => {
    clearFsFaults();
    fsFaults.write.set(WEBHOOK_SECRET_FILE, ['EROFS']);
    const { registrar, secret } = await bed.registrar();
    try {
      const refused = await registrar.reconcile(ALL_HOOKS);
      expect(refused.failed).toEqual([{ key: '*', error: expect.stringMatching(/new webhook token is not saved yet/) as string, reason: expect.objectContaining({ code: 'reason.other' }) as object }]);
      expect(bed.fx.sim.registrations()).toEqual([]);
      // Saved again on its own after a second.
      await vi.waitFor(() => {
        expect(secret.token).toBeDefined();
      }, { timeout: 5_000 });
      const report = await registrar.reconcile(ALL_HOOKS);
      expect(report.registered).toHaveLength(4);
      const saved = JSON.parse(readFileSync(bed.fx.storage.file(WEBHOOK_SECRET_FILE), 'utf8')) as { token: string };
      expect(bed.fx.sim.registrations().every((reg) => reg.token === saved.token)).toBe(true);
    } finally {
      secret.stop();
      registrar.stop();
    }
  });
});

import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { tokenFingerprint, WEBHOOK_SECRET_FILE, WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import { Storage } from '../../../src/storage.js';
import { KEPT_FILE_RETRY_MS } from '../../../src/util/kept-file.js';
import { recordingLog } from '../../callbacks/helpers.js';

describe('the webhook token ("a random 32-byte secret kept in storage")', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'secret-'));
    storage = new Storage(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generated once: 32 random bytes as base64url, generation 1, file mode 0600, the same on the next start', async () => {
    const first = await WebhookSecret.load(storage);
    expect(Buffer.from(String(first.token), 'base64url')).toHaveLength(32);
    expect(first.generation).toBe(1);
    expect((await stat(join(dir, WEBHOOK_SECRET_FILE))).mode & 0o777).toBe(0o600);
    const again = await WebhookSecret.load(storage);
    expect(again.token).toBe(first.token);
    const other = await WebhookSecret.load(new Storage(join(dir, 'other')));
    expect(other.token).not.toBe(first.token);
  });

  it('accepts the stored token only: not another token, not a missing or empty header', async () => {
    const secret = await WebhookSecret.load(storage);
    const other = await WebhookSecret.load(new Storage(join(dir, 'other')));
    expect(JSON.parse(await readFile(join(dir, WEBHOOK_SECRET_FILE), 'utf8'))).toMatchObject({ token: secret.token, generation: 1 });
    expect(secret.accepts(secret.token)).toBe(true);
    expect(secret.accepts(other.token)).toBe(false);
    expect(secret.accepts(undefined)).toBe(false);
    expect(secret.accepts('')).toBe(false);
  });

  it.each([['unparseable', '{"token":'], ['of the wrong shape', '{"token":"short","generation":1}']])('a damaged (%s) file gets a new token whose generation no ledger entry can match, and the log says so', async (_what, text) => {
    await storage.ensureDir();
    await writeFile(join(dir, WEBHOOK_SECRET_FILE), text);
    const { log, lines } = recordingLog();
    const secret = await WebhookSecret.load(storage, { now: () => 1_700_000_000_000, log });
    expect(secret.generation).toBe(1_700_000_000);
    expect(secret.token).toBeDefined();
    expect(secret.fingerprint).toBe(tokenFingerprint(secret.token ?? ''));
    expect(secret.fingerprint).not.toContain(secret.token?.slice(0, 8));
    expect(lines.join('\n')).toMatch(/webhook-secret\.json was damaged .*a new webhook token was made: every webhook registration is sent again with it now/);
    expect(lines.join('\n')).not.toContain(String(secret.token));
  });

  it('a missing file is no damage: generation 1, nothing logged', async () => {
    const { log, lines } = recordingLog();
    const secret = await WebhookSecret.load(storage, { log });
    expect(secret.generation).toBe(1);
    expect(lines).toEqual([]);
  });
});

describe('a webhook token file that is only unreadable for a while is never replaced', () => {
  let dir: string;
  let storage: Storage;
  let secret: WebhookSecret | undefined;
  beforeEach(async () => {
    // The waits between reads are timers; the files are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    dir = await mkdtemp(join(tmpdir(), 'secret-'));
    storage = new Storage(dir);
  });
  afterEach(async () => {
    vi.useRealTimers();
    secret?.stop();
    secret = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A read error of a real file (here EISDIR: the name is taken by a folder), not a damaged file. */
  async function unreadable(): Promise<void> {
    await mkdir(join(dir, WEBHOOK_SECRET_FILE), { recursive: true });
  }

  it('no token while it cannot be read (callbacks get 503, not 401); tried again, the old token is kept and listeners hear of it', async () => {
    const old = await WebhookSecret.load(storage);
    const oldText = await readFile(join(dir, WEBHOOK_SECRET_FILE), 'utf8');
    await rm(join(dir, WEBHOOK_SECRET_FILE));
    await unreadable();
    const { log, lines } = recordingLog();
    secret = await WebhookSecret.load(storage, { log });
    expect(secret.token).toBeUndefined();
    expect(lines.join('\n')).toMatch(/webhook-secret\.json could not be read .*EISDIR.*kept: callbacks are answered "try again later" .* and webhooks are not registered until it can be read/);
    const changed = vi.fn();
    secret.onChange(changed);
    // The folder that stood in the way is gone and the old file is back: it is read again, not replaced.
    await rm(join(dir, WEBHOOK_SECRET_FILE), { recursive: true });
    await writeFile(join(dir, WEBHOOK_SECRET_FILE), oldText);
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => {
      expect(changed).toHaveBeenCalledTimes(1);
    });
    expect(secret.token).toBe(old.token);
    expect(secret.generation).toBe(old.generation);
    expect(await readFile(join(dir, WEBHOOK_SECRET_FILE), 'utf8')).toBe(oldText);
    expect(lines.join('\n')).toMatch(/webhook-secret\.json can be read again/);
  });

  it('while it stays unreadable, it is tried again and again and never written over', async () => {
    await unreadable();
    const { log, lines } = recordingLog();
    secret = await WebhookSecret.load(storage, { log });
    // Five tries on the schedule a file kept unread follows.
    for (const wait of KEPT_FILE_RETRY_MS.slice(0, 5)) await vi.advanceTimersByTimeAsync(wait);
    expect(secret.token).toBeUndefined();
    // Said once, not at every try.
    expect(lines.filter((line) => line.includes('could not be read'))).toHaveLength(1);
    expect((await stat(join(dir, WEBHOOK_SECRET_FILE))).isDirectory()).toBe(true);
  });

  it('found damaged on a later try: a new token is made then, and listeners hear of it', async () => {
    await unreadable();
    secret = await WebhookSecret.load(storage, { now: () => 1_700_000_000_000 });
    const changed = vi.fn();
    secret.onChange(changed);
    await rm(join(dir, WEBHOOK_SECRET_FILE), { recursive: true });
    await writeFile(join(dir, WEBHOOK_SECRET_FILE), 'garbage');
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => {
      expect(changed).toHaveBeenCalledTimes(1);
    });
    expect(secret.generation).toBe(1_700_000_000);
    expect(JSON.parse(await readFile(join(dir, WEBHOOK_SECRET_FILE), 'utf8'))).toMatchObject({ token: secret.token });
  });
});

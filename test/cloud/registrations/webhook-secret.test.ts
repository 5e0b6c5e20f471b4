import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PREVIOUS_TOKEN_GRACE_MS, tokenFingerprint, WEBHOOK_SECRET_FILE, WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import { Storage } from '../../../src/storage.js';

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
    expect(Buffer.from(first.token, 'base64url')).toHaveLength(32);
    expect(first.generation).toBe(1);
    expect((await stat(join(dir, WEBHOOK_SECRET_FILE))).mode & 0o777).toBe(0o600);
    const again = await WebhookSecret.load(storage);
    expect(again.token).toBe(first.token);
    const other = await WebhookSecret.load(new Storage(join(dir, 'other')));
    expect(other.token).not.toBe(first.token);
  });

  it('rotate: new token, next generation, stored before use; the old one is accepted until retired, then for a grace period', async () => {
    let now = 1_000;
    const secret = await WebhookSecret.load(storage, { now: () => now });
    const old = secret.token;
    await secret.rotate();
    expect(secret.generation).toBe(2);
    expect(secret.token).not.toBe(old);
    expect(JSON.parse(await readFile(join(dir, WEBHOOK_SECRET_FILE), 'utf8'))).toMatchObject({ token: secret.token, generation: 2 });
    expect(secret.accepts(secret.token)).toBe(true);
    now += 24 * 60 * 60 * 1000;
    expect(secret.accepts(old)).toBe(true);
    await secret.retirePrevious();
    now += PREVIOUS_TOKEN_GRACE_MS - 1;
    expect(secret.accepts(old)).toBe(true);
    now += 2;
    expect(secret.accepts(old)).toBe(false);
    expect(secret.accepts(undefined)).toBe(false);
    expect(secret.accepts('')).toBe(false);
  });

  it('a damaged file gets a new token whose generation no ledger entry can match', async () => {
    await storage.ensureDir();
    await writeFile(join(dir, WEBHOOK_SECRET_FILE), '{"token":');
    const secret = await WebhookSecret.load(storage, { now: () => 1_700_000_000_000 });
    expect(secret.generation).toBe(1_700_000_000);
    expect(secret.fingerprint).toBe(tokenFingerprint(secret.token));
    expect(secret.fingerprint).not.toContain(secret.token.slice(0, 8));
  });
});

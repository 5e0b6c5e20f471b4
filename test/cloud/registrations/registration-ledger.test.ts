// The ledger in storage ("using a ledger in storage").
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { LEDGER_FILE, RegistrationLedger } from '../../../src/cloud/registrations/registration-ledger.js';
import { Storage } from '../../../src/storage.js';
import { confirmed } from './registration-entries.js';

describe('the ledger in storage (webhooks.json)', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('round-trips entries and coalesces a burst of flushes into few writes, each caller seeing its change on disk', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    let writes = 0;
    const storage = new (class extends Storage {
      override write(name: string, value: unknown): Promise<void> {
        writes++;
        return super.write(name, value);
      }
    })(dir);
    const ledger = await RegistrationLedger.load(storage, () => undefined);
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      ledger.set(confirmed({ kind: 'lock', id: `L${i}` }));
      flushes.push(ledger.flush());
    }
    await Promise.all(flushes);
    expect(writes).toBe(2);
    const again = await RegistrationLedger.load(storage, () => undefined);
    expect(again.size).toBe(50);
    expect(again.get('lock:L49')).toMatchObject({ state: 'registered', url: 'https://home.example.net/lock-access/lock/L49' });
    const text = await readFile(join(dir, LEDGER_FILE), 'utf8');
    expect(text).not.toContain('token"'); // the token itself is never stored, only its fingerprint
  });

  it('a damaged file is reported and treated as empty (everything is registered again)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    const storage = new Storage(dir);
    await storage.ensureDir();
    await writeFile(join(dir, LEDGER_FILE), '{"version":1,"entries":[{"kind":"lo');
    const reasons: string[] = [];
    const ledger = await RegistrationLedger.load(storage, (reason) => reasons.push(reason));
    expect(ledger.size).toBe(0);
    expect(reasons).toHaveLength(1);
  });

  it('erase removes the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-'));
    const storage = new Storage(dir);
    const ledger = await RegistrationLedger.load(storage, () => undefined);
    ledger.set(confirmed({ kind: 'user', id: '' }));
    await ledger.flush();
    await ledger.erase();
    expect(await storage.readText(LEDGER_FILE)).toBeUndefined();
  });
});

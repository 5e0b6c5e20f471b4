// The diagnostics file as the settings page builds it, from the real files the plugin writes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { collectDiagnostics } from '../../src/settings-ui/diagnostics-file.js';
import { EVENT_LOG_FILE } from '../../src/status/event-log.js';
import { STATUS_FILE } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';

const SIGNED = 'https://media.example.com/stills/BELL-1/a.jpg?X-Amz-Credential=AKIA9911&X-Amz-Signature=0a1b2c3d4e5f&X-Amz-Expires=300';

describe('Download diagnostics: motion stills are signed links', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'diagnostics-'));
    storage = new Storage(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the event log\'s and the status file\'s still URLs keep host and path, never the query string', async () => {
    await storage.write(EVENT_LOG_FILE, { entries: [{ deviceKind: 'doorbell', deviceId: 'BELL-1', deviceName: 'Porch', kind: 'motion', at: 1, text: 'Motion', imageUrl: SIGNED }] });
    await storage.write(STATUS_FILE, { devices: [{ kind: 'doorbell', id: 'BELL-1', lastMotion: { imageUrl: SIGNED } }] });
    const report = await collectDiagnostics(storage, { platform: 'LockAccess', webhook: { publicUrl: 'https://home.example.net/la' } }, 1_000);
    const text = JSON.stringify(report);
    for (const part of ['AKIA9911', '0a1b2c3d4e5f', 'X-Amz-']) expect(text, part).not.toContain(part);
    expect((report.events as { imageUrl?: string }[])[0]?.imageUrl).toBe('https://media.example.com/stills/BELL-1/a.jpg?[redacted]');
  });
});

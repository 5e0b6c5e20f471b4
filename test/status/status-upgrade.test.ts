// Status files an earlier version wrote (version 1: sentences where messages are now) are read as
// today's: the link's sentence becomes its code again, any other sentence shows as it was written
// (the legacy code the page shows by its text), and the `accounts` section is upgraded alike. The
// two files under old-files/ were written by the previous version's own StatusWriter (without and
// with the accounts section).
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { linkMessage } from '../../src/cloud/link-messages.js';
import { accountStatusMessage } from '../../src/status/account-status.js';
import { STATUS_VERSION } from '../../src/status/status-shape.js';
import { StatusWriter, readStatus } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';
import { LEGACY_MESSAGE_CODE, legacyMessage } from '../../src/util/ui-message.js';

const OLD = join(import.meta.dirname, 'old-files');

describe('status.json changes shape once: version 1 files are read as version 2', () => {
  let dir: string;
  let storage: Storage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'status-upgrade-'));
    storage = Storage.under(dir);
    await mkdir(join(dir, 'lock-access'), { recursive: true });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function oldFile(name: string): Promise<unknown> {
    await copyFile(join(OLD, name), storage.file('status.json'));
    return JSON.parse(await readFile(join(OLD, name), 'utf8')) as unknown;
  }

  it('a version 1 file without accounts: every sentence the page shows is a message, nothing else changes', async () => {
    const raw = (await oldFile('status-v1.json')) as { version: number; receiver: unknown; devices: unknown; registrations: { lastError: string }[] };
    expect(raw.version).toBe(1);
    const status = await readStatus(storage);
    expect(status?.version).toBe(STATUS_VERSION);
    expect(status?.link).toMatchObject({ state: 'reauthorizationNeeded', message: linkMessage('link.reauthorizationNeeded') });
    expect(status?.selfCheck?.message).toEqual({ code: LEGACY_MESSAGE_CODE, params: {}, text: expect.stringMatching(/^Nothing answered at https:\/\/home\.example\.net/) as unknown });
    expect(status?.selfCheck?.history?.map((h) => h.message.code)).toEqual([LEGACY_MESSAGE_CODE, LEGACY_MESSAGE_CODE]);
    expect(status?.publicAddress?.tunnel?.message).toEqual(legacyMessage('The ngrok tunnel could not connect: ngrok refused the authtoken (ERR_NGROK_107).'));
    expect(status?.delivery?.lastCheck?.message).toEqual(legacyMessage('A status request for Front Door brought no callback within 30 s of its answer.'));
    expect(status?.delivery?.checked).toEqual({
      registrations: legacyMessage('every webhook registration was sent again (1 confirmed)'),
      selfCheck: legacyMessage('the public address self-check fails: Nothing answered'),
    });
    expect(status?.registrations[0]?.lastError).toEqual(legacyMessage(raw.registrations[0]?.lastError ?? ''));
    expect(status?.video?.problem).toEqual(legacyMessage('no ffmpeg on the PATH'));
    expect(status?.receiver).toEqual(raw.receiver);
    expect(status?.devices).toEqual(raw.devices);
    expect(status?.accounts).toBeUndefined();
  });

  it('a version 1 file with the accounts section: each account\'s link is a message; its old state-only delivery is dropped until its watch writes one', async () => {
    await oldFile('status-v1-accounts.json');
    const status = await readStatus(storage);
    expect(status?.accounts?.cabin).toEqual({ name: 'Cabin', link: { state: 'linked', message: accountStatusMessage('accounts.link.linked'), since: expect.any(Number) as unknown } });
    expect(status?.accounts?.dup?.link).toMatchObject({ state: 'disabled', message: { code: LEGACY_MESSAGE_CODE, text: expect.stringMatching(/same Lock Access user as the main account/) as unknown } });
  });

  it('the next run writes version 2', async () => {
    await oldFile('status-v1-accounts.json');
    const writer = await StatusWriter.open(storage);
    await writer.flush();
    const written = JSON.parse(await readFile(storage.file('status.json'), 'utf8')) as { version: number; link: { message: unknown } };
    expect(written.version).toBe(STATUS_VERSION);
    expect(written.link.message).toEqual(linkMessage('link.notYet'));
  });

  it('a file of an unknown version is not read (the page says the plugin has not written one)', async () => {
    const raw = (await oldFile('status-v1.json')) as Record<string, unknown>;
    await storage.write('status.json', { ...raw, version: 99 });
    expect(await readStatus(storage)).toBeUndefined();
  });
});

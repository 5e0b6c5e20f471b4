// Homebridge's UI saves config.json by moving the old file to its backups and then writing the new
// one (truncate, then write), so a read between the two finds no file or half a file. The settings
// page's readers wait for the save to finish instead of reporting a missing or damaged config.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { readSavedPlatform } from '../../src/settings-ui/account-input.js';
import { readHomebridgeConfig } from '../../src/settings-ui/homebridge-config.js';
import { readMatterPairing } from '../../src/settings-ui/matter-pairing.js';

let dir: string;
let configPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-hb-config-'));
  configPath = join(dir, 'config.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SAVED = { bridge: { name: 'Homebridge', username: '0E:11:22:33:44:55', matter: { port: 5540 } }, platforms: [{ platform: 'LockAccess', apiKey: 'saved-key', matter: false }] };

/** The UI's save, in its two steps: the old file moved away now, the new one written when `finish` is called. */
async function saveUnderWay(): Promise<{ finish: (text?: string) => Promise<void> }> {
  await writeFile(configPath, JSON.stringify({ platforms: [] }));
  await rename(configPath, join(dir, 'config.json.backup'));
  return { finish: (text = JSON.stringify(SAVED)) => writeFile(configPath, text) };
}

describe('reading Homebridge\'s config.json while the Homebridge UI saves it', () => {
  it('a read that finds no file waits for the new one', async () => {
    const save = await saveUnderWay();
    let pauses = 0;
    const read = readHomebridgeConfig(configPath, { pause: async () => { pauses += 1; if (pauses === 2) await save.finish(); } });
    await expect(read).resolves.toEqual(SAVED);
    expect(pauses).toBe(2);
  });

  it('a read that finds half a file (the write under way) waits for the whole one', async () => {
    await writeFile(configPath, JSON.stringify(SAVED).slice(0, 40));
    const read = readHomebridgeConfig(configPath, { pause: () => writeFile(configPath, JSON.stringify(SAVED)) });
    await expect(read).resolves.toEqual(SAVED);
  });

  it('a file that stays missing is reported after the last try, with what the system said', async () => {
    let pauses = 0;
    await expect(readHomebridgeConfig(configPath, { tries: 4, pause: () => { pauses += 1; return Promise.resolve(); } })).rejects.toThrow(/ENOENT/);
    expect(pauses).toBe(3);
  });

  it('a file that stays damaged is reported as not JSON', async () => {
    await writeFile(configPath, '{"bridge": ');
    await expect(readHomebridgeConfig(configPath, { tries: 3, pause: () => Promise.resolve() })).rejects.toThrow(SyntaxError);
  });

  it('the Matter box and the saved account read the new file, not "could not be read" or nothing (real timers, the write 30 ms later)', async () => {
    const save = await saveUnderWay();
    setTimeout(() => void save.finish(), 30);
    const [matter, platform] = await Promise.all([readMatterPairing({ storagePath: dir, configPath }), readSavedPlatform(configPath)]);
    expect(matter.message).toMatchObject({ code: 'matter.pluginOff.main', params: {} });
    expect(matter.message.text).toMatch(/keeps its devices HomeKit-only/);
    expect(platform).toMatchObject({ platform: 'LockAccess', apiKey: 'saved-key' });
  });
});

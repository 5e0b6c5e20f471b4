import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { commissioningFile, readMatterPairing } from '../../src/settings-ui/matter-pairing.js';

let storagePath: string;
let configPath: string;

beforeEach(async () => {
  storagePath = await mkdtemp(join(tmpdir(), 'lock-access-matter-ui-'));
  configPath = join(storagePath, 'config.json');
});

afterEach(async () => {
  await rm(storagePath, { recursive: true, force: true });
});

const MAIN = { name: 'Homebridge', username: '0E:11:22:33:44:55', port: 51826, pin: '031-45-154' };
const COMMISSIONING = { qrCode: 'MT:-24J04QI14YNCP3IM10', manualPairingCode: '2149-324-5966', passcode: 75315796, discriminator: 2084, commissioned: false, fabricCount: 0, fabrics: [] };

async function config(value: unknown): Promise<void> {
  await writeFile(configPath, JSON.stringify(value));
}

async function commissioning(username: string, value: unknown): Promise<void> {
  const file = commissioningFile(storagePath, username);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, JSON.stringify(value));
}

const read = () => readMatterPairing({ storagePath, configPath });

describe('the settings UI shows whether Matter is on and how to pair', () => {
  it('Homebridge keeps pairing data in <storagePath>/matter/<username without colons>/commissioning.json', () => {
    expect(commissioningFile('/hb', '0E:11:22:33:44:55')).toBe(join('/hb', 'matter', '0E1122334455', 'commissioning.json'));
  });

  it('main bridge with Matter: the pairing code and the QR payload Homebridge made, not paired yet', async () => {
    await config({ bridge: { ...MAIN, matter: { port: 5540 } }, platforms: [{ platform: 'LockAccess' }] });
    await commissioning(MAIN.username, COMMISSIONING);
    const info = await read();
    expect(info).toMatchObject({ bridge: 'main', bridgeMatter: true, pluginMatter: true, active: true, manualPairingCode: '2149-324-5966', qrCode: 'MT:-24J04QI14YNCP3IM10', commissioned: false });
    expect(info.message).toMatchObject({ code: 'matter.ready.main', params: {} });
    expect(info.message.text).toMatch(/pair it in Google Home, Alexa or another Matter app with the code below/);
    // The UI never needs the raw passcode: the code and the QR payload carry it.
    expect(JSON.stringify(info)).not.toContain('75315796');
  });

  it('a child bridge: its own _bridge block and storage folder count, not the main bridge\'s', async () => {
    const child = { username: '0E:AA:BB:CC:DD:EE', port: 51900, matter: {} };
    await config({ bridge: { ...MAIN }, platforms: [{ platform: 'Other' }, { platform: 'LockAccess', _bridge: child }] });
    await commissioning(child.username, { ...COMMISSIONING, manualPairingCode: '1111-222-3333' });
    const info = await read();
    expect(info).toMatchObject({ bridge: 'child', active: true, manualPairingCode: '1111-222-3333' });
    expect(info.message).toMatchObject({ code: 'matter.ready.child', params: {} });
    expect(info.message.text).toMatch(/child bridge/);
  });

  it('paired: says so, with the labels the Matter apps gave themselves', async () => {
    await config({ bridge: { ...MAIN, matter: {} }, platforms: [{ platform: 'LockAccess' }] });
    await commissioning(MAIN.username, { ...COMMISSIONING, commissioned: true, fabricCount: 1, fabrics: [{ fabricIndex: 1, label: 'Google Home' }] });
    const info = await read();
    expect(info).toMatchObject({ commissioned: true, controllers: ['Google Home'] });
    expect(info.message).toEqual({ code: 'matter.pairedWith.main', params: { controllers: 'Google Home' }, text: 'Matter is on for the Homebridge bridge and paired with Google Home.' });
  });

  it('Matter off for the bridge (no matter block, enabled false, or externals only): off, and what to do', async () => {
    for (const matter of [undefined, { enabled: false }, { externalsOnly: true }]) {
      await config({ bridge: { ...MAIN, ...(matter === undefined ? {} : { matter }) }, platforms: [{ platform: 'LockAccess' }] });
      const info = await read();
      expect(info).toMatchObject({ bridgeMatter: false, active: false });
      expect(info.message.text).toMatch(/Matter is off for the Homebridge bridge: turn it on/);
    }
  });

  it('"matter": false in the plugin\'s settings: on for the bridge, off for this plugin', async () => {
    await config({ bridge: { ...MAIN, matter: {} }, platforms: [{ platform: 'LockAccess', matter: false }] });
    const info = await read();
    expect(info).toMatchObject({ bridgeMatter: true, pluginMatter: false, active: false });
    expect(info.message.text).toMatch(/keeps its devices HomeKit-only/);
  });

  it('no pairing file yet, a broken one, or no readable config: a sentence, never a throw', async () => {
    await config({ bridge: { ...MAIN, matter: {} }, platforms: [{ platform: 'LockAccess' }] });
    expect((await read()).message.text).toMatch(/has not made a pairing code yet: restart Homebridge/);
    await commissioning(MAIN.username, 'not json');
    const file = commissioningFile(storagePath, MAIN.username);
    await writeFile(file, '{ broken');
    expect((await read()).message.text).toMatch(/pairing file could not be read/);
    await writeFile(configPath, '{ broken');
    expect((await read()).message.text).toMatch(/config\.json could not be read/);
  });

  it('says which Matter apps were tried and which were not', async () => {
    await config({ bridge: MAIN, platforms: [] });
    const info = await read();
    expect(info.testedControllers.tested.join(' ')).toMatch(/matter\.js/);
    expect(info.testedControllers.untested).toEqual(expect.arrayContaining(['Google Home', 'Amazon Alexa']));
  });
});

// What the settings UI shows about Matter: whether it is on for the bridge the plugin
// runs on (the main bridge, or its child bridge), whether the plugin publishes to it, and the pairing
// code and QR payload Homebridge made, read from Homebridge's Matter storage:
// <storagePath>/matter/<bridge username without colons>/commissioning.json. Read-only, no secrets:
// the pairing code is what a user types into a Matter app, shown by Homebridge's own UI too.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod/v3';

import { reasonOf } from '../util/reason-messages.js';
import { messageCatalog, type UiMessage } from '../util/ui-message.js';
import { PLATFORM_NAME } from '../settings.js';
import { readHomebridgeConfig } from './homebridge-config.js';

/**
 * What the plugin's Matter endpoints were tried with, said plainly in the UI and the README ("Google
 * Home, Alexa and other Matter apps"): only what was really run, no claims for untried apps.
 */
export const TESTED_CONTROLLERS = {
  tested: ['the matter.js 0.17 controller, in the plugin\'s end-to-end tests: pairing, reading, reports, lock and unlock, doorbell presses, restarts'],
  untested: ['Google Home', 'Amazon Alexa', 'SmartThings', 'Apple Home over Matter'],
} as const;

const matterBlockSchema = z.object({ port: z.number().optional(), enabled: z.boolean().optional(), externalsOnly: z.boolean().optional() }).passthrough();
const bridgeSchema = z.object({ username: z.string(), name: z.string().optional(), matter: matterBlockSchema.optional() }).passthrough();
const configSchema = z.object({
  bridge: bridgeSchema.optional(),
  platforms: z.array(z.object({ platform: z.string().optional(), matter: z.boolean().optional(), _bridge: bridgeSchema.optional() }).passthrough()).optional(),
}).passthrough();

const commissioningSchema = z.object({
  manualPairingCode: z.string().optional(),
  qrCode: z.string().optional(),
  commissioned: z.boolean().optional(),
  fabricCount: z.number().optional(),
  fabrics: z.array(z.object({ label: z.string().optional() }).passthrough()).optional(),
}).passthrough();

export interface MatterPairingInfo {
  /** Which bridge the plugin runs on. */
  bridge: 'main' | 'child';
  /** Matter is configured and enabled for that bridge. */
  bridgeMatter: boolean;
  /** The platform option `matter` (default true). */
  pluginMatter: boolean;
  /** The plugin publishes Matter endpoints (both of the above). */
  active: boolean;
  manualPairingCode?: string;
  qrCode?: string;
  /** Whether a Matter app has paired the bridge, and the labels those apps gave themselves. */
  commissioned?: boolean;
  controllers?: string[];
  testedControllers: typeof TESTED_CONTROLLERS;
  /** One sentence for the user: what is on, or what to do. */
  message: UiMessage;
}

/** The bridge the plugin runs on is named in each sentence, so each has a code per bridge. */
export const MATTER_MESSAGES = {
  'matter.configUnreadable': 'Homebridge\'s config.json could not be read ({reason}).',
  'matter.off.main': 'Matter is off for the Homebridge bridge: turn it on in Homebridge 2\'s bridge settings (Matter) to reach Google Home, Alexa and other Matter apps.',
  'matter.off.child': 'Matter is off for this plugin\'s child bridge: turn it on in Homebridge 2\'s bridge settings (Matter) to reach Google Home, Alexa and other Matter apps.',
  'matter.pluginOff.main': 'Matter is on for the Homebridge bridge, but Lock Access keeps its devices HomeKit-only ("Also publish to Matter" is off).',
  'matter.pluginOff.child': 'Matter is on for this plugin\'s child bridge, but Lock Access keeps its devices HomeKit-only ("Also publish to Matter" is off).',
  'matter.noUsername': 'Matter is on, but the bridge has no username in config.json.',
  'matter.noCode.main': 'Matter is on for the Homebridge bridge; Homebridge has not made a pairing code yet: restart Homebridge, then open this page again.',
  'matter.noCode.child': 'Matter is on for this plugin\'s child bridge; Homebridge has not made a pairing code yet: restart Homebridge, then open this page again.',
  'matter.pairingUnreadable': 'Matter is on, but Homebridge\'s Matter pairing file could not be read.',
  'matter.pairedWith.main': 'Matter is on for the Homebridge bridge and paired with {controllers}.',
  'matter.pairedWith.child': 'Matter is on for this plugin\'s child bridge and paired with {controllers}.',
  'matter.pairedApps.main': { one: 'Matter is on for the Homebridge bridge and paired with {count} Matter app.', other: 'Matter is on for the Homebridge bridge and paired with {count} Matter apps.' },
  'matter.pairedApps.child': { one: 'Matter is on for this plugin\'s child bridge and paired with {count} Matter app.', other: 'Matter is on for this plugin\'s child bridge and paired with {count} Matter apps.' },
  'matter.ready.main': 'Matter is on for the Homebridge bridge: pair it in Google Home, Alexa or another Matter app with the code below.',
  'matter.ready.child': 'Matter is on for this plugin\'s child bridge: pair it in Google Home, Alexa or another Matter app with the code below.',
} as const;

const say = messageCatalog(MATTER_MESSAGES);

/** Where Homebridge keeps a bridge's Matter pairing data. */
export function commissioningFile(storagePath: string, username: string): string {
  return join(storagePath, 'matter', username.replace(/:/g, ''), 'commissioning.json');
}

export async function readMatterPairing(options: { storagePath: string; configPath: string }): Promise<MatterPairingInfo> {
  const base = { testedControllers: TESTED_CONTROLLERS };
  let config: z.infer<typeof configSchema>;
  try {
    config = configSchema.parse(await readHomebridgeConfig(options.configPath));
  } catch (error) {
    return { ...base, bridge: 'main', bridgeMatter: false, pluginMatter: true, active: false, message: say('matter.configUnreadable', { reason: reasonOf(error) }) };
  }
  const block = config.platforms?.find((p) => p.platform === PLATFORM_NAME);
  const child = block?._bridge;
  const bridge = child ?? config.bridge;
  const where = child ? 'child' : 'main';
  const matter = bridge?.matter;
  const bridgeMatter = matter !== undefined && matter.enabled !== false && matter.externalsOnly !== true;
  const pluginMatter = block?.matter !== false;
  const info = { ...base, bridge: child ? ('child' as const) : ('main' as const), bridgeMatter, pluginMatter, active: bridgeMatter && pluginMatter };
  if (!bridgeMatter) {
    return { ...info, message: say(`matter.off.${where}`) };
  }
  if (!pluginMatter) {
    return { ...info, message: say(`matter.pluginOff.${where}`) };
  }
  if (!bridge) return { ...info, message: say('matter.noUsername') };
  let raw: string;
  try {
    raw = await readFile(commissioningFile(options.storagePath, bridge.username), 'utf8');
  } catch {
    return { ...info, message: say(`matter.noCode.${where}`) };
  }
  const parsed = commissioningSchema.safeParse(safeJson(raw));
  if (!parsed.success) return { ...info, message: say('matter.pairingUnreadable') };
  const data = parsed.data;
  const controllers = (data.fabrics ?? []).flatMap((f) => (f.label === undefined || f.label === '' ? [] : [f.label]));
  const commissioned = data.commissioned ?? (data.fabricCount ?? 0) > 0;
  return {
    ...info,
    ...(data.manualPairingCode === undefined ? {} : { manualPairingCode: data.manualPairingCode }),
    ...(data.qrCode === undefined ? {} : { qrCode: data.qrCode }),
    commissioned,
    controllers,
    message: !commissioned
      ? say(`matter.ready.${where}`)
      : controllers.length > 0
        ? say(`matter.pairedWith.${where}`, { controllers: controllers.join(', ') })
        : say(`matter.pairedApps.${where}`, { count: data.fabricCount ?? 1 }),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

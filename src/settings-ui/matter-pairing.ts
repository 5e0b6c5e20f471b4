// What the settings UI shows about Matter: whether it is on for the bridge the plugin
// runs on (the main bridge, or its child bridge), whether the plugin publishes to it, and the pairing
// code and QR payload Homebridge made, read from Homebridge's Matter storage:
// <storagePath>/matter/<bridge username without colons>/commissioning.json. Read-only, no secrets:
// the pairing code is what a user types into a Matter app, shown by Homebridge's own UI too.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { z } from 'zod/v3';

import { errorText } from '../util/error-text.js';
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
  message: string;
}

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
    return { ...base, bridge: 'main', bridgeMatter: false, pluginMatter: true, active: false, message: `Homebridge's config.json could not be read (${errorText(error)}).` };
  }
  const block = config.platforms?.find((p) => p.platform === PLATFORM_NAME);
  const child = block?._bridge;
  const bridge = child ?? config.bridge;
  const where = child ? 'this plugin\'s child bridge' : 'the Homebridge bridge';
  const matter = bridge?.matter;
  const bridgeMatter = matter !== undefined && matter.enabled !== false && matter.externalsOnly !== true;
  const pluginMatter = block?.matter !== false;
  const info = { ...base, bridge: child ? ('child' as const) : ('main' as const), bridgeMatter, pluginMatter, active: bridgeMatter && pluginMatter };
  if (!bridgeMatter) {
    return { ...info, message: `Matter is off for ${where}: turn it on in Homebridge 2's bridge settings (Matter) to reach Google Home, Alexa and other Matter apps.` };
  }
  if (!pluginMatter) {
    return { ...info, message: `Matter is on for ${where}, but Lock Access keeps its devices HomeKit-only ("Also publish to Matter" is off).` };
  }
  if (!bridge) return { ...info, message: 'Matter is on, but the bridge has no username in config.json.' };
  let raw: string;
  try {
    raw = await readFile(commissioningFile(options.storagePath, bridge.username), 'utf8');
  } catch {
    return { ...info, message: `Matter is on for ${where}; Homebridge has not made a pairing code yet: restart Homebridge, then open this page again.` };
  }
  const parsed = commissioningSchema.safeParse(safeJson(raw));
  if (!parsed.success) return { ...info, message: 'Matter is on, but Homebridge\'s Matter pairing file could not be read.' };
  const data = parsed.data;
  const controllers = (data.fabrics ?? []).flatMap((f) => (f.label === undefined || f.label === '' ? [] : [f.label]));
  const commissioned = data.commissioned ?? (data.fabricCount ?? 0) > 0;
  return {
    ...info,
    ...(data.manualPairingCode === undefined ? {} : { manualPairingCode: data.manualPairingCode }),
    ...(data.qrCode === undefined ? {} : { qrCode: data.qrCode }),
    commissioned,
    controllers,
    message: commissioned
      ? `Matter is on for ${where} and paired with ${controllers.length > 0 ? controllers.join(', ') : `${data.fabricCount ?? 1} Matter app(s)`}.`
      : `Matter is on for ${where}: pair it in Google Home, Alexa or another Matter app with the code below.`,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

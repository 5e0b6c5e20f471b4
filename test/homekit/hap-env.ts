// Real Homebridge APIs (2.x with HAP-NodeJS 2, and 1.x with HAP-NodeJS 0.14) for accessory unit tests:
// accessories, services and characteristics are HAP's own objects, never fakes.
import type { API, Characteristic, PlatformAccessory, Service, WithUUID } from 'homebridge';

import { HomebridgeAPI as HomebridgeApi1 } from '../../node_modules/homebridge1/lib/api.js';
import { HomebridgeAPI as HomebridgeApi2 } from '../../node_modules/homebridge/dist/api.js';
import type { Logger } from '../../src/util/logger.js';

export interface HapEnv {
  label: string;
  api: API;
}

export const hapEnvs: HapEnv[] = [
  { label: 'Homebridge 2 (HAP-NodeJS 2)', api: new HomebridgeApi2() },
  { label: 'Homebridge 1 (HAP-NodeJS 0.14)', api: new HomebridgeApi1() as unknown as API },
];

export function newAccessory(api: API, name: string, uuid: string): PlatformAccessory {
  return new api.platformAccessory(name, uuid);
}

/** Round-trips an accessory through Homebridge's own cache serialisation, as a restart does. */
export function restart(api: API, accessory: PlatformAccessory): PlatformAccessory {
  const ctor = api.platformAccessory as unknown as {
    serialize(accessory: PlatformAccessory): unknown;
    deserialize(json: unknown): PlatformAccessory;
  };
  // Homebridge only serialises accessories that a registered platform owns.
  accessory._associatedPlugin = 'homebridge-lock-access';
  accessory._associatedPlatform = 'LockAccess';
  return ctor.deserialize(JSON.parse(JSON.stringify(ctor.serialize(accessory))));
}

export interface CapturedLog {
  log: Logger;
  lines: { level: 'info' | 'warn' | 'error' | 'debug'; message: string }[];
  text(level?: 'info' | 'warn' | 'error' | 'debug'): string;
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const at = (level: 'info' | 'warn' | 'error' | 'debug') => (message: string) => {
    lines.push({ level, message });
  };
  return {
    log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') },
    lines,
    text: (level) => lines.filter((line) => level === undefined || line.level === level).map((line) => line.message).join('\n'),
  };
}

export type ServiceType = WithUUID<new (displayName?: string, subtype?: string) => Service>;
export type CharacteristicType = WithUUID<new () => Characteristic>;

export function service(accessory: PlatformAccessory, type: ServiceType, subtype?: string): Service {
  const found = accessory.services.find((s) => s.UUID === type.UUID && (s.subtype === '' ? undefined : s.subtype) === subtype);
  if (!found) throw new Error(`no ${type.name} service${subtype === undefined ? '' : ` (${subtype})`}`);
  return found;
}

export function hasService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): boolean {
  return accessory.services.some((s) => s.UUID === type.UUID && (s.subtype === '' ? undefined : s.subtype) === subtype);
}

/** Reads a characteristic the way a HAP controller's read does (through its onGet handler). */
export async function read(accessory: PlatformAccessory, type: ServiceType, characteristic: CharacteristicType, subtype?: string): Promise<unknown> {
  return service(accessory, type, subtype).getCharacteristic(characteristic).handleGetRequest();
}

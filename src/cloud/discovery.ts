// The account's devices: what the service lists (GET /users/locks/mine, /users/doorbells/mine)
// merged with the config. Parsing is tolerant (one odd entry does not lose the others), and a failed
// discovery never removes a device: the caller's devices of the last run stand in for it.
import { z } from 'zod';

import type { DoorbellEntry, LockEntry } from '../config.js';
import { DEFAULT_MOTION_TIMEOUT_SECONDS } from '../settings.js';
import { errorText } from '../util/error-text.js';
import type { ApiClient } from './http/api.js';

export interface DiscoveredDevice {
  id: string;
  name: string | undefined;
}

export interface DiscoveredDevices {
  locks: DiscoveredDevice[];
  doorbells: DiscoveredDevice[];
}

export interface MergedLock {
  id: string;
  /** Config name, else the service's name, else `Lock <id>`. */
  name: string;
  doorSensor: boolean;
  /** Only the door sensor: the lock itself is in HomeKit on its own. */
  doorSensorOnly: boolean;
  /** Where the device is known from. */
  source: 'config' | 'service' | 'both';
}

export interface MergedDoorbell {
  id: string;
  name: string;
  motionTimeoutSeconds: number;
  source: 'config' | 'service' | 'both';
}

export interface MergedDevices {
  locks: MergedLock[];
  doorbells: MergedDoorbell[];
}

/** The part of the config that lists devices (entries as parsed by src/config.ts). */
export interface DeviceConfig {
  locks: readonly LockEntry[];
  doorbells: readonly DoorbellEntry[];
}

const listSchema = z.record(z.string(), z.unknown());
const optionalName = z.string().trim().min(1).optional().catch(undefined);
const lockSchema = z.looseObject({ LockName: optionalName });
const doorbellSchema = z.looseObject({ name: optionalName });

/** Raised when a discovery answer is not an object keyed by device id. */
export class DiscoveryShapeError extends Error {
  constructor(what: string) {
    super(`the service's list of ${what} has an unexpected shape`);
    this.name = 'DiscoveryShapeError';
  }
}

function parseList(raw: unknown, what: 'locks' | 'doorbells'): DiscoveredDevice[] {
  const list = listSchema.safeParse(raw);
  if (!list.success || Array.isArray(raw)) throw new DiscoveryShapeError(what);
  const devices: DiscoveredDevice[] = [];
  for (const [id, value] of Object.entries(list.data)) {
    if (id.trim() === '') continue;
    if (what === 'locks') {
      const entry = lockSchema.safeParse(value);
      if (entry.success) devices.push({ id, name: entry.data.LockName });
    } else {
      const entry = doorbellSchema.safeParse(value);
      if (entry.success) devices.push({ id, name: entry.data.name });
    }
  }
  return devices;
}

/** `GET /users/locks/mine`: `{ [lockId]: { LockName, ... } }`. Entries that are not objects are skipped. */
export function parseLocksMine(raw: unknown): DiscoveredDevice[] {
  return parseList(raw, 'locks');
}

/** `GET /users/doorbells/mine`: `{ [doorbellId]: { name, ... } }`. */
export function parseDoorbellsMine(raw: unknown): DiscoveredDevice[] {
  return parseList(raw, 'doorbells');
}

function source(inConfig: boolean, inService: boolean): 'config' | 'service' | 'both' {
  return inConfig && inService ? 'both' : inConfig ? 'config' : 'service';
}

/**
 * Config entries override names and add their options; `hidden: true` excludes a device even when
 * the service lists it; devices only in the config are kept. Order: config order, then the rest in
 * the service's order. `discovered` undefined means "no discovery" (config only).
 */
export function mergeDevices(config: DeviceConfig, discovered: DiscoveredDevices | undefined): MergedDevices {
  const lockConfig = new Map(config.locks.map((entry) => [entry.id, entry]));
  const doorbellConfig = new Map(config.doorbells.map((entry) => [entry.id, entry]));
  const serviceLocks = new Map((discovered?.locks ?? []).map((device) => [device.id, device]));
  const serviceDoorbells = new Map((discovered?.doorbells ?? []).map((device) => [device.id, device]));

  const locks: MergedLock[] = [];
  for (const id of unique([...lockConfig.keys(), ...serviceLocks.keys()])) {
    const entry = lockConfig.get(id);
    if (entry?.hidden) continue;
    const found = serviceLocks.get(id);
    locks.push({
      id,
      name: nonEmpty(entry?.name) ?? found?.name ?? `Lock ${id}`,
      doorSensor: entry?.doorSensor ?? false,
      doorSensorOnly: entry?.doorSensorOnly ?? false,
      source: source(entry !== undefined, found !== undefined),
    });
  }
  const doorbells: MergedDoorbell[] = [];
  for (const id of unique([...doorbellConfig.keys(), ...serviceDoorbells.keys()])) {
    const entry = doorbellConfig.get(id);
    if (entry?.hidden) continue;
    const found = serviceDoorbells.get(id);
    doorbells.push({
      id,
      name: nonEmpty(entry?.name) ?? found?.name ?? `Doorbell ${id}`,
      motionTimeoutSeconds: entry?.motionTimeoutSeconds ?? DEFAULT_MOTION_TIMEOUT_SECONDS,
      source: source(entry !== undefined, found !== undefined),
    });
  }
  return { locks, doorbells };
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** Both lists from the service. Each list fails on its own (its promise rejects). */
export async function discoverDevices(client: ApiClient): Promise<DiscoveredDevices> {
  const [locks, doorbells] = await Promise.all([discoverLocks(client), discoverDoorbells(client)]);
  return { locks, doorbells };
}

export async function discoverLocks(client: ApiClient): Promise<DiscoveredDevice[]> {
  return parseLocksMine(await client.request('GET', '/users/locks/mine'));
}

export async function discoverDoorbells(client: ApiClient): Promise<DiscoveredDevice[]> {
  return parseDoorbellsMine(await client.request('GET', '/users/doorbells/mine'));
}

export interface ResolvedDevices {
  devices: MergedDevices;
  /** What to pass as `lastKnown` next time (the service's lists, or the fallback used). */
  discovered: DiscoveredDevices;
  /** One plain sentence per list that could not be fetched; empty when discovery worked. */
  problems: string[];
}

/**
 * Discovery with a safety net: a list that cannot be fetched is replaced by the devices known from
 * the last run (`lastKnown`), so a cloud hiccup at start-up never removes accessories.
 */
export async function resolveDevices(client: ApiClient, config: DeviceConfig, lastKnown: DiscoveredDevices | undefined): Promise<ResolvedDevices> {
  const problems: string[] = [];
  const settle = async (what: 'locks' | 'doorbells', fetch: () => Promise<DiscoveredDevice[]>): Promise<DiscoveredDevice[]> => {
    try {
      return await fetch();
    } catch (error) {
      const reason = errorText(error);
      problems.push(`the list of ${what} could not be fetched (${reason}); using the ${what} known from the last run`);
      return lastKnown?.[what] ?? [];
    }
  };
  const [locks, doorbells] = await Promise.all([settle('locks', () => discoverLocks(client)), settle('doorbells', () => discoverDoorbells(client))]);
  const discovered = { locks, doorbells };
  return { devices: mergeDevices(config, discovered), discovered, problems };
}

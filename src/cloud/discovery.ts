// The account's devices: what the service lists (GET /users/locks/mine, /users/doorbells/mine)
// merged with the config. Parsing is tolerant (one odd entry does not lose the others). Each list
// stands alone: an account without doorbells may answer that list with 404, 204, [] or null, which
// means "none" and leaves the locks standing; a list that fails is replaced by the devices of that
// kind known from the last run, so a cloud hiccup never removes a device.
import { z } from 'zod/v3';

import type { DoorbellConfig, LockConfig } from '../config.js';
import { doorbellEntry, lockEntry, type DoorbellEntry, type LockEntry } from '../model/device-entry.js';
import { errorText } from '../util/error-text.js';
import type { ApiClient } from './http/api.js';
import { RequestRejectedError } from './http/errors.js';

export interface DiscoveredDevice {
  id: string;
  name: string | undefined;
}

export interface DiscoveredDevices {
  locks: DiscoveredDevice[];
  doorbells: DiscoveredDevice[];
}

/** Where a device is known from. */
export type DeviceSource = 'config' | 'service' | 'both';

/** A device's entry with where it is known from. */
export type Sourced<E> = E & { source: DeviceSource };

export interface MergedDevices {
  locks: Sourced<LockEntry>[];
  doorbells: Sourced<DoorbellEntry>[];
}

/** The part of the config that lists devices (entries as parsed by src/config.ts). */
export interface DeviceConfig {
  locks: readonly LockConfig[];
  doorbells: readonly DoorbellConfig[];
}

const listSchema = z.record(z.string(), z.unknown());
const optionalName = z.string().trim().min(1).optional().catch(undefined);
const lockSchema = z.object({ LockName: optionalName }).passthrough();
const doorbellSchema = z.object({ name: optionalName }).passthrough();

/** Raised when a discovery answer is not an object keyed by device id. */
export class DiscoveryShapeError extends Error {
  constructor(what: string) {
    super(`the service's list of ${what} has an unexpected shape`);
    this.name = 'DiscoveryShapeError';
  }
}

function parseList(raw: unknown, what: 'locks' | 'doorbells'): DiscoveredDevice[] {
  // No content, null or an empty array: how an account without such devices is answered.
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
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

function source(inConfig: boolean, inService: boolean): DeviceSource {
  return inConfig && inService ? 'both' : inConfig ? 'config' : 'service';
}

/**
 * Config entries override names and add their settings; `hidden: true` excludes a device even when
 * the service lists it (a config entry refused for a mistake arrives here as hidden); devices only
 * in the config are kept. Order: config order, then the rest in the service's order. `discovered`
 * undefined means "no discovery" (config only).
 */
export function mergeDevices(config: DeviceConfig, discovered: DiscoveredDevices | undefined): MergedDevices {
  const lockConfig = byId(config.locks, (first, later) => ({ ...first, hidden: first.hidden || later.hidden, doorSensorOnly: first.doorSensorOnly === true || later.doorSensorOnly === true }));
  const doorbellConfig = byId(config.doorbells, (first, later) => ({ ...first, hidden: first.hidden || later.hidden }));
  const serviceLocks = new Map((discovered?.locks ?? []).map((device) => [device.id, device]));
  const serviceDoorbells = new Map((discovered?.doorbells ?? []).map((device) => [device.id, device]));

  const locks: Sourced<LockEntry>[] = [];
  for (const id of unique([...lockConfig.keys(), ...serviceLocks.keys()])) {
    const entry = lockConfig.get(id);
    if (entry?.hidden) continue;
    const found = serviceLocks.get(id);
    const name = nonEmpty(entry?.name) ?? found?.name ?? `Lock ${id}`;
    locks.push({ ...lockEntry(id, name, entry), source: source(entry !== undefined, found !== undefined) });
  }
  const doorbells: Sourced<DoorbellEntry>[] = [];
  for (const id of unique([...doorbellConfig.keys(), ...serviceDoorbells.keys()])) {
    const entry = doorbellConfig.get(id);
    if (entry?.hidden) continue;
    const found = serviceDoorbells.get(id);
    const name = nonEmpty(entry?.name) ?? found?.name ?? `Doorbell ${id}`;
    doorbells.push({ ...doorbellEntry(id, name, entry), source: source(entry !== undefined, found !== undefined) });
  }
  return { locks, doorbells };
}

/**
 * One entry per id. The first entry's settings win, but an id listed twice is held back when any
 * of its entries holds it back (hidden, door sensor only): a second entry never widens the first.
 */
function byId<E extends { id: string }>(entries: readonly E[], join: (first: E, later: E) => E): Map<string, E> {
  const result = new Map<string, E>();
  for (const entry of entries) {
    const first = result.get(entry.id);
    result.set(entry.id, first === undefined ? entry : join(first, entry));
  }
  return result;
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** Both lists from the service, each read on its own; a list that fails rejects the whole. */
export async function discoverDevices(client: ApiClient): Promise<DiscoveredDevices> {
  const [locks, doorbells] = await Promise.all([discoverLocks(client), discoverDoorbells(client)]);
  return { locks, doorbells };
}

/** A 404 on a list: the account has no such list (a lock-only account has no doorbell list). */
const noSuchList = (error: unknown) => error instanceof RequestRejectedError && error.status === 404;

async function readList(client: ApiClient, what: 'locks' | 'doorbells'): Promise<DiscoveredDevice[]> {
  try {
    const raw = await client.request('GET', what === 'locks' ? '/users/locks/mine' : '/users/doorbells/mine');
    return what === 'locks' ? parseLocksMine(raw) : parseDoorbellsMine(raw);
  } catch (error) {
    if (noSuchList(error)) return [];
    throw error;
  }
}

export function discoverLocks(client: ApiClient): Promise<DiscoveredDevice[]> {
  return readList(client, 'locks');
}

export function discoverDoorbells(client: ApiClient): Promise<DiscoveredDevice[]> {
  return readList(client, 'doorbells');
}

export interface ListedDevices {
  /** The service's lists, each replaced by `lastKnown`'s devices of that kind where it failed. */
  discovered: DiscoveredDevices;
  /** One plain sentence per list that could not be fetched; empty when both answered. */
  problems: string[];
}

/**
 * Discovery with a safety net, the only place that has one: each list is asked on its own, and a
 * list that cannot be fetched is replaced by the devices of that kind known from the last run
 * (`lastKnown`), so a failure of one list neither removes its devices nor holds back the other.
 */
export async function discoverEachList(client: ApiClient, lastKnown: DiscoveredDevices): Promise<ListedDevices> {
  const problems: string[] = [];
  const settle = async (what: 'locks' | 'doorbells'): Promise<DiscoveredDevice[]> => {
    try {
      return await readList(client, what);
    } catch (error) {
      problems.push(`the list of ${what} could not be fetched (${errorText(error)}); the ${what} known from the last run stay`);
      return lastKnown[what];
    }
  };
  const [locks, doorbells] = await Promise.all([settle('locks'), settle('doorbells')]);
  return { discovered: { locks, doorbells }, problems };
}

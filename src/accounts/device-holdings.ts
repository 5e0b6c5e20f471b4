// The devices of every account in one registry. Each account's setup reports the devices it holds
// (its config, its discovery, its membership changes); a device several accounts hold is one device
// (one accessory, one Matter endpoint, one state), with one owner that registers, probes and
// operates it. One account's report never sweeps another account's devices.
import { deviceKey, type DeviceEntry, type DeviceKind } from '../model/device-entry.js';
import type { DeviceHolding, DeviceOwnersFile } from '../storage/device-owners.js';
import type { Logger } from '../util/logger.js';
import { MAIN_ACCOUNT_ID } from '../config.js';
import { ownerOf } from './owner-rule.js';

/** What the holdings need of the device registry. */
export interface HeldRegistry {
  remembered(): DeviceEntry[];
  sync(wanted: readonly DeviceEntry[], sweep: boolean): void;
  remove(kind: DeviceKind, id: string): boolean;
  lockIds(): string[];
  doorbellIds(): string[];
}

/** One account's entries for its devices, as the config lists them. */
export interface AccountDeviceLists {
  readonly locks: readonly { id: string; hidden: boolean; account?: string | undefined }[];
  readonly doorbells: readonly { id: string; hidden: boolean; account?: string | undefined }[];
}

export interface HoldingsDeps {
  registry: HeldRegistry;
  /** Every account's id in config order, the main account first. */
  order: readonly string[];
  listed(account: string): AccountDeviceLists;
  /** Linked now ("re-authorization needed" counts). */
  linked(account: string): boolean;
  /** Its tokens have started (or it never starts): until then whether it is linked is not known. */
  started(account: string): boolean;
  owners: DeviceOwnersFile;
  log: Logger;
  /** A device's owner changed: `to` registers it, then `from` (if any) deletes its registration. */
  ownerChanged(key: string, from: string | undefined, to: string | undefined): void;
}

interface Part {
  entries: readonly DeviceEntry[];
  sweep: boolean;
}

export class DeviceHoldings {
  private readonly parts = new Map<string, Part>();
  private readonly owners = new Map<string, string>();
  /** Devices whose new owner has not confirmed its registration yet: their old owner keeps its own. */
  private readonly handingOver = new Map<string, string>();
  /**
   * Accounts being unlinked, or unlinked: no longer eligible as owners, still holders until their
   * devices are handed over; their setup's reports change nothing until they are linked again.
   */
  private readonly leaving = new Set<string>();
  private handedOver: (() => void) | undefined;

  constructor(private readonly deps: HoldingsDeps) {}

  /** The devices `account` held in the last run (a device kept with no holders belongs to the main account). */
  remembered(account: string): DeviceEntry[] {
    return this.deps.registry.remembered().filter((device) => this.keptHolders(deviceKey(device.kind, device.id)).includes(account));
  }

  /** An account's setup found these devices; `sweep`: its lists are complete, so its others leave. */
  report(account: string, entries: readonly DeviceEntry[], sweep: boolean): void {
    // A run under way when its account began to leave would bring the devices it released back.
    if (this.leaving.has(account)) return;
    this.parts.set(account, { entries: [...entries], sweep });
    this.apply();
  }

  /** One device leaves one account while running (its own user was removed from the lock). */
  remove(account: string, kind: DeviceKind, id: string): void {
    const key = deviceKey(kind, id);
    const part = this.parts.get(account);
    if (part) this.parts.set(account, { ...part, entries: part.entries.filter((d) => deviceKey(d.kind, d.id) !== key) });
    if (this.holders(key).length === 0) {
      this.deps.registry.remove(kind, id);
      this.owners.delete(key);
    }
    this.apply();
  }

  /** An account was unlinked: it holds nothing any more, and its devices that another account holds are handed over. */
  release(account: string): void {
    this.parts.set(account, { entries: [], sweep: true });
    this.apply();
  }

  /**
   * `account` is being unlinked: its shared devices get their new owners now, and the promise ends
   * once each has registered them (or after `limitMs`), so the old registrations go only then.
   */
  async leave(account: string, limitMs: number): Promise<void> {
    this.leaving.add(account);
    this.chooseOwners();
    const deadline = Date.now() + limitMs;
    while (this.handingOverFrom(account).length > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.handedOver = resolve;
        setTimeout(resolve, Math.max(0, deadline - Date.now())).unref();
      });
    }
    this.handedOver = undefined;
    for (const key of this.handingOverFrom(account)) this.handingOver.delete(key);
    this.release(account);
  }

  /** Link states changed: owners are chosen again. */
  relink(): void {
    this.chooseOwners();
  }

  /** `account` is linked again after it left: its setup's reports count again. */
  rejoin(account: string): void {
    this.leaving.delete(account);
  }

  /** `account` has reported its devices at least once. */
  knows(account: string): boolean {
    return this.parts.has(account);
  }

  holds(account: string, kind: DeviceKind, id: string): boolean {
    return this.holders(deviceKey(kind, id)).includes(account);
  }

  ownerOf(kind: DeviceKind, id: string): string | undefined {
    return this.owners.get(deviceKey(kind, id));
  }

  /** The devices `account` registers: those it owns, and those it hands over until their new owner has registered. */
  owned(account: string, kind: DeviceKind): string[] {
    const ids = kind === 'lock' ? this.deps.registry.lockIds() : this.deps.registry.doorbellIds();
    return ids.filter((id) => {
      const key = deviceKey(kind, id);
      return this.owners.get(key) === account || this.handingOver.get(key) === account;
    });
  }

  /** Devices an account hands over to another, not yet registered by their new owner. */
  handingOverFrom(account: string): string[] {
    return [...this.handingOver].filter(([, from]) => from === account).map(([key]) => key);
  }

  /** `account` registered these (ledger keys `lock:ID`): a handover to it is complete, the old owner may delete its own. */
  registered(account: string, keys: readonly string[]): void {
    for (const key of keys) {
      const from = this.handingOver.get(key);
      if (from === undefined || this.owners.get(key) !== account) continue;
      this.handingOver.delete(key);
      this.deps.ownerChanged(key, from, undefined);
    }
    this.handedOver?.();
  }

  /** The accounts holding a device, in config order. */
  holders(key: string): string[] {
    const reported = (account: string) => this.parts.get(account)?.entries.some((d) => deviceKey(d.kind, d.id) === key) === true;
    // Without a holder's word (a list failed, or its account has not run yet): the last run's holders that may still hold it.
    const unsaid = (account: string) => this.parts.get(account)?.sweep !== true;
    const record = this.deps.owners.get(key);
    if (record === undefined) {
      const named = this.deps.order.filter(reported);
      return named.length > 0 ? named : [MAIN_ACCOUNT_ID].filter(unsaid);
    }
    return this.deps.order.filter((account) => reported(account) || (record.holders.includes(account) && unsaid(account)));
  }

  private keptHolders(key: string): string[] {
    return this.deps.owners.get(key)?.holders ?? [MAIN_ACCOUNT_ID];
  }

  private apply(): void {
    const { order, registry } = this.deps;
    const hidden = new Set(order.flatMap((account) => {
      const listed = this.deps.listed(account);
      return [...listed.locks.filter((e) => e.hidden).map((e) => deviceKey('lock', e.id)), ...listed.doorbells.filter((e) => e.hidden).map((e) => deviceKey('doorbell', e.id))];
    }));
    const chosen = new Map<string, DeviceEntry>();
    for (const account of order) {
      for (const entry of this.parts.get(account)?.entries ?? []) {
        const key = deviceKey(entry.kind, entry.id);
        if (hidden.has(key)) continue;
        // Name and options: the owner's entry, else the first that lists the device, else the first found.
        const lists = this.lists(account, entry);
        const current = chosen.get(key);
        if (current === undefined || (lists && (this.owners.get(key) === account || !this.listedBy(current, key)))) chosen.set(key, entry);
      }
    }
    // A device no report names stays while an account that may hold it has not said (its list failed,
    // or it has not run yet); the rest leave, but only once every account has reported.
    const kept = registry.remembered().filter((device) => {
      const key = deviceKey(device.kind, device.id);
      return !chosen.has(key) && !hidden.has(key) && this.holders(key).length > 0;
    });
    registry.sync([...chosen.values(), ...kept], order.every((account) => this.parts.has(account)));
    this.chooseOwners();
  }

  private lists(account: string, entry: DeviceEntry): boolean {
    const listed = this.deps.listed(account);
    return (entry.kind === 'lock' ? listed.locks : listed.doorbells).some((e) => e.id === entry.id);
  }

  private listedBy(entry: DeviceEntry, key: string): boolean {
    return this.holders(key).some((account) => this.lists(account, entry));
  }

  private chooseOwners(): void {
    const { registry, order } = this.deps;
    const kept: Record<string, DeviceHolding> = {};
    const keys = [...registry.lockIds().map((id) => deviceKey('lock', id)), ...registry.doorbellIds().map((id) => deviceKey('doorbell', id))];
    for (const key of keys) {
      const holders = this.holders(key);
      const [kind, ...rest] = key.split(':');
      const id = rest.join(':');
      const named = order.flatMap((account) => {
        const listed = this.deps.listed(account);
        return (kind === 'lock' ? listed.locks : listed.doorbells).filter((e) => e.id === id && e.account !== undefined).map((e) => e.account as string);
      });
      // After a restart the owner kept in storage is the one that hands over (its registration is the one at the service).
      const stored = this.deps.owners.get(key)?.owner;
      const before = this.owners.get(key) ?? (stored !== undefined && order.includes(stored) ? stored : undefined);
      // The kept owner whose tokens have not started yet may still be linked: nothing moves until it is known.
      const undecided = before !== undefined && before === stored && !this.owners.has(key) && !this.deps.started(before) && !this.leaving.has(before);
      const chosen = undecided ? before : ownerOf({ holders, named, stored: before, linked: (account) => !this.leaving.has(account) && this.deps.linked(account) });
      // A leaving account keeps what no other account can take: its unlink deletes those registrations after the handovers.
      const owner = chosen ?? (before !== undefined && this.leaving.has(before) && holders.includes(before) ? before : undefined);
      if (owner === undefined) this.owners.delete(key);
      else if (!undecided) this.owners.set(key, owner);
      if (owner !== before) {
        // The old owner keeps its registration until the new one has its own (the service delivers once per registration).
        // So does an owner that stopped holding it (its own user was removed): its registration goes last too.
        if (before !== undefined && owner !== undefined) this.handingOver.set(key, before);
        if (before !== undefined || owner !== undefined) this.deps.ownerChanged(key, before, owner);
      }
      kept[key] = owner === undefined ? { holders } : { owner, holders };
    }
    this.deps.owners.set(kept);
  }
}

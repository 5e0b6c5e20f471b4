// Wiring of the extra accounts to the devices: which account's client sends a device's commands
// (its owner's), which callbacks an account's path may apply (its own devices' only), and when an
// extra account's path is open (enabled and linked). A block of one account uses none of this.
import { DeviceHoldings } from './device-holdings.js';
import type { AccountUnit } from './account-unit.js';
import type { AccountGate } from '../callbacks/listener-options.js';
import type { CloudHttpClient } from '../cloud/http/http-client.js';
import { MAIN_ACCOUNT_ID } from '../config.js';
import type { DeviceKind } from '../model/device-entry.js';
import { isDoorbellEvent, isLockEvent, type DeviceEvent } from '../model/events.js';
import type { DeviceRegistry } from '../model/device-registry.js';
import { DeviceOwnersFile } from '../storage/device-owners.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import { Signal } from '../util/signal.js';

export class AccountDevices {
  /** A device's owner changed, or a handover completed (`to` undefined): those accounts run their setup. */
  readonly ownerChanged = new Signal<[key: string, from: string | undefined, to: string | undefined]>();
  /** Accounts stopped while running (the same user as an earlier account): their paths are closed. */
  private readonly stopped = new Set<string>();
  /** Accounts whose tokens have started (or that never start): whether they are linked is known. */
  private readonly started = new Set<string>();
  private readonly units: Map<string, AccountUnit>;
  private readonly gates = new Map<string, AccountGate>();
  private readonly loggedStrays = new Set<string>();

  private constructor(
    private readonly main: AccountUnit,
    extras: readonly AccountUnit[],
    readonly holdings: DeviceHoldings | undefined,
    private readonly log: Logger,
  ) {
    this.units = new Map([[MAIN_ACCOUNT_ID, main], ...extras.map((unit) => [unit.account.id, unit] as const)]);
    for (const unit of extras) this.gates.set(unit.account.id, { apiKey: unit.account.apiKey, callbackToken: () => unit.secret.token });
  }

  static async open(deps: { main: AccountUnit; extras: readonly AccountUnit[]; registry: DeviceRegistry; storage: Storage; log: Logger }): Promise<AccountDevices> {
    const { main, extras, registry, storage, log } = deps;
    if (extras.length === 0) return new AccountDevices(main, extras, undefined, log);
    const owners = await DeviceOwnersFile.open(storage, log);
    const all = [main, ...extras];
    // The holdings ask the accounts' link states, which the object made after them answers.
    const ref: { devices?: AccountDevices } = {};
    const holdings = new DeviceHoldings({
      registry,
      order: all.map((unit) => unit.account.id),
      listed: (account) => all.find((unit) => unit.account.id === account)?.account ?? { locks: [], doorbells: [] },
      linked: (account) => ref.devices?.linked(account) ?? false,
      started: (account) => ref.devices?.started.has(account) ?? false,
      owners,
      log,
      ownerChanged: (key, from, to) => {
        ref.devices?.ownerChanged.emit(key, from, to);
      },
    });
    const devices = new AccountDevices(main, extras, holdings, log);
    ref.devices = devices;
    return devices;
  }

  /** The unit of an account id (`main` or an extra id), or of a callback's path (undefined: the main account). */
  unit(account: string | undefined): AccountUnit | undefined {
    return this.units.get(account ?? MAIN_ACCOUNT_ID);
  }

  /** Enabled, not stopped, and linked ("re-authorization needed" counts: its callbacks still arrive). */
  linked(account: string): boolean {
    const unit = this.units.get(account);
    return unit !== undefined && !this.stopped.has(account) && !unit.control.idle && unit.tokens.state !== 'unlinked';
  }

  /** The receiver's look-up of an extra account's path. */
  gate(account: string): AccountGate | undefined {
    return this.linked(account) ? this.gates.get(account) : undefined;
  }

  /** The account's tokens have started (or it never starts): owners it kept from the last run are chosen again. */
  hasStarted(account: string): void {
    this.started.add(account);
    this.holdings?.relink();
  }

  stop(account: string): void {
    this.stopped.add(account);
    this.holdings?.release(account);
  }

  isStopped(account: string): boolean {
    return this.stopped.has(account);
  }

  /** The client of the account that owns a device: its commands, probes and look-ups go with that account's token. */
  clientFor(kind: DeviceKind, id: string): CloudHttpClient {
    const owner = this.holdings?.ownerOf(kind, id);
    return (owner === undefined ? undefined : this.units.get(owner))?.client ?? this.main.client;
  }

  /** "Cabin (cabin)" when an extra account owns the device (sends its commands); undefined for the main account's. */
  extraOwnerLabel(kind: DeviceKind, id: string): string | undefined {
    const owner = this.holdings?.ownerOf(kind, id);
    const unit = owner === undefined ? undefined : this.units.get(owner);
    return unit === undefined || unit.account.main ? undefined : `${unit.account.name} (${unit.account.id})`;
  }

  /**
   * The events a path's account may apply: those of its own devices, and the account's own notices.
   * Another device's events change nothing, with one log line per account and device.
   */
  ownEvents(events: readonly DeviceEvent[], account: string | undefined): DeviceEvent[] {
    const holdings = this.holdings;
    const id = account ?? MAIN_ACCOUNT_ID;
    if (holdings === undefined || !holdings.knows(id)) return [...events];
    return events.filter((event) => {
      const device = isLockEvent(event) ? (['lock', event.lockId] as const) : isDoorbellEvent(event) ? (['doorbell', event.doorbellId] as const) : undefined;
      if (device === undefined || (isLockEvent(event) && event.kind === 'membership') || holdings.holds(id, device[0], device[1])) return true;
      const key = `${id}:${device[0]}:${device[1]}`;
      if (!this.loggedStrays.has(key)) {
        this.loggedStrays.add(key);
        const unit = this.units.get(id);
        this.log.info(`A callback on the path of ${unit?.account.main === false ? `account ${unit.account.name} (${id})` : 'the main account'} names ${device[0]} ${device[1]}, which that account does not hold; it changes nothing.`);
      }
      return false;
    });
  }
}

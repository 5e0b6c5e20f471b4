// Brings the plugin in line with the account: discovery, the device set (every view follows),
// webhook registration, and on the first run the self-check and the state refresh. One run at a
// time; a request during a run repeats it once afterwards.
import { AccountUser } from './account-user.js';
import type { ApiClient } from './http/api.js';
import { discoverEachList, type DiscoveredDevices } from './discovery.js';
import type { LockAccessConfig } from '../config.js';
import { errorText } from '../util/error-text.js';
import { SingleRun } from '../util/single-run.js';
import type { Logger } from '../util/logger.js';
import {
  applyMembership,
  discoveredSet,
  NO_MEMBERSHIP_CHANGES,
  startupDevices,
  withMembershipChange,
  type Membership,
} from './device-set.js';
import type { DeviceSource } from './discovery.js';
import type { Registrar } from './link-control.js';
import type { ReconcileReport } from './registrations/registration-report.js';
import type { RegistrationStatus } from './registrations/registrations.js';
import { refreshLockStates } from './startup-checks.js';
import type { DeviceEntry } from '../model/device-entry.js';

/** What the setup needs of the device registry. */
export interface RegistryView {
  /** The devices served in the last run. */
  remembered(): DeviceEntry[];
  /** Makes the devices match `wanted` (every view follows); with `sweep`, the rest leave. */
  sync(wanted: readonly DeviceEntry[], sweep: boolean): void;
  /** One device leaves while running. */
  remove(kind: 'lock', id: string): void;
  lockIds(): string[];
  doorbellIds(): string[];
  nameOf(kind: 'lock', id: string): string;
}

/** Where the setup's results are shown (the status file). */
export interface SetupStatus {
  registrations(registrations: RegistrationStatus[]): void;
  /** Where each device (`lock:ID`) is known from, set before the registry syncs. */
  knownFrom(sources: ReadonlyMap<string, DeviceSource>): void;
}

export interface AccountSetupDeps {
  config: LockAccessConfig;
  log: Logger;
  client: ApiClient;
  registry: RegistryView;
  status: SetupStatus;
  /** Unlinked; read again after every await. */
  isIdle(): boolean;
  isStopped(): boolean;
  registrar(): Registrar | undefined;
  /** The self-check needs the listener running. */
  listening(): boolean;
  /** The public-address self-check (it then repeats on its own). */
  selfCheck(): Promise<void>;
}

export class AccountSetup {
  private readonly runs = new SingleRun(
    () => this.runOnce(),
    (error: unknown) => {
      this.deps.log.error(`Lock Access could not finish setting up with the service (${errorText(error)}); it tries again later.`);
    },
    () => this.deps.isStopped(),
  );
  private firstRun = true;
  /** refreshStateOnStart waits for registrations at a real address: asked before, the status callbacks would go nowhere. */
  private refreshWanted = false;
  private membership: Membership = NO_MEMBERSHIP_CHANGES;
  private serviceLockNames: ReadonlyMap<string, string> = new Map();
  private sources: ReadonlyMap<string, DeviceSource> = new Map();
  /** Requests waiting for a check before they may run: settled() waits for their answers too. */
  private readonly asking = new Set<Promise<void>>();

  /** The account's own user: only their removal from a lock takes the lock away. */
  private readonly accountUser: AccountUser;

  constructor(private readonly deps: AccountSetupDeps) {
    this.accountUser = new AccountUser(deps.client);
  }

  /** Where a device (`lock:ID`) is known from, after the last discovery. */
  sourceOf(key: string): DeviceSource | undefined {
    return this.sources.get(key);
  }

  /** What to serve before the service has been asked. */
  startupDevices(): DeviceEntry[] {
    return startupDevices(this.deps.config, this.deps.registry.remembered());
  }

  /** Starts a run, or asks the running one to repeat; `asFirstRun` repeats the first run's checks. */
  request(asFirstRun = false): void {
    if (asFirstRun) this.firstRun = true;
    if (this.deps.isIdle()) return;
    this.runs.request();
  }

  /**
   * Starts a run (as request() does) once `allowed` says yes. Until it answers the setup counts as
   * asked for: start-up's wait for every account's first setup must not end in between.
   */
  requestIf(allowed: Promise<boolean>, asFirstRun = false): void {
    const asked: Promise<void> = allowed
      .then((ok) => {
        if (ok) this.request(asFirstRun);
      }, (error: unknown) => {
        this.deps.log.error(`Lock Access could not check whether this account may set up (${errorText(error)}); it tries again later.`);
      })
      .finally(() => this.asking.delete(asked));
    this.asking.add(asked);
  }

  /** Resolves once no run is under way or asked for (a run asked for during one follows it); true when one was. */
  async settled(): Promise<boolean> {
    let waited = false;
    for (;;) {
      const run = this.runs.current;
      if (run !== undefined) {
        waited = true;
        await run;
        continue;
      }
      if (this.asking.size === 0) return waited;
      waited = true;
      await Promise.all(this.asking);
    }
  }

  /**
   * Registrations ran outside a run (after a new public address): the first run's state refresh
   * goes out once some are in place.
   */
  async registered(report: ReconcileReport | undefined): Promise<void> {
    await this.refreshOnceRegistered(report);
  }

  /**
   * The user webhook added or removed someone on a lock. An addition: the lock joins at once. A
   * removal of the account's own user: the lock leaves at once and its webhook goes; another
   * person's removal is only an event (the router logs and records it), and the lock stays.
   */
  membershipChanged(lockId: string, change: 'added' | 'removed', userId: string | undefined): void {
    if (change === 'removed') {
      void this.removed(lockId, userId);
      return;
    }
    this.membership = withMembershipChange(this.membership, lockId, change);
    this.request();
  }

  private async removed(lockId: string, userId: string | undefined): Promise<void> {
    const own = await this.accountUser.id();
    if (this.deps.isStopped()) return;
    if (own === undefined) {
      // Whose removal it was cannot be told: the service's own device list decides in a run now.
      this.deps.log.info(`Someone was removed from ${this.deps.registry.nameOf('lock', lockId)}, and the service did not say who the account's own user is; the lock stays unless the service no longer lists it.`);
      this.request();
      return;
    }
    if (userId !== own) return;
    this.membership = withMembershipChange(this.membership, lockId, 'removed');
    this.deps.registry.remove('lock', lockId);
    this.request();
  }

  private async runOnce(): Promise<void> {
    const { config, log, client, registry } = this.deps;
    const registrar = this.deps.registrar();
    if (!registrar) return;
    const firstRun = this.firstRun;
    this.firstRun = false;
    // Known before a removal callback needs it.
    if (firstRun) void this.accountUser.id();

    let devices = this.startupDevices();
    // Nothing is swept out while a list failed: its devices of the last run stand in for it.
    let sweep = true;
    if (config.discoverDevices) {
      const listed = await discoverEachList(client, lastKnownLists(devices));
      for (const problem of listed.problems) log.warn(`Could not ask the service for your devices: ${problem}.`);
      sweep = listed.problems.length === 0;
      const found = discoveredSet(config, listed.discovered);
      this.sources = found.sources;
      this.deps.status.knownFrom(found.sources);
      this.serviceLockNames = found.serviceLockNames;
      devices = found.devices;
    }
    devices = applyMembership(devices, this.membership, config, this.serviceLockNames);
    if (this.deps.isStopped()) return;
    registry.sync(devices, sweep);

    // Unlinking may have happened while discovery ran.
    if (this.deps.isIdle()) return;
    const report = await registrar.reconcile({ locks: registry.lockIds(), doorbells: registry.doorbellIds(), user: config.userWebhook });
    const current = this.deps.registrar();
    if (current) this.deps.status.registrations(current.status());

    if (firstRun && !this.deps.isIdle()) {
      if (this.deps.listening()) await this.deps.selfCheck();
      if (config.refreshStateOnStart) this.refreshWanted = true;
    }
    await this.refreshOnceRegistered(report);
  }

  /** Asks every lock for its state, once, when registrations are in place at a real address. */
  private async refreshOnceRegistered(report: ReconcileReport | undefined): Promise<void> {
    if (!this.refreshWanted || this.deps.isIdle() || report === undefined || report.skipped) return;
    if (report.registered.length + report.unchanged.length === 0) return;
    this.refreshWanted = false;
    const { client, log, registry } = this.deps;
    await refreshLockStates({ client, lockIds: registry.lockIds(), log, nameOf: (id) => registry.nameOf('lock', id) });
  }
}

/** The devices served before asking, as the lists the service would give: the fallback of a failed list. */
function lastKnownLists(devices: readonly DeviceEntry[]): DiscoveredDevices {
  const of = (kind: DeviceEntry['kind']) => devices.filter((d) => d.kind === kind).map((d) => ({ id: d.id, name: d.name }));
  return { locks: of('lock'), doorbells: of('doorbell') };
}

// The running plugin: wires storage, tokens, the cloud client, registrations, the callback receiver
// and the accessories. Start-up never waits for the cloud: accessories are served from the cache at
// once, and discovery, registration, the self-check and the state refresh run in the background.
import { randomBytes } from 'node:crypto';
import { unwatchFile, watchFile } from 'node:fs';

import type { API, Logging, PlatformAccessory } from 'homebridge';

import { AccessoryRegistry, type WantedDevice } from './accessory-registry.js';
import { describeCommandFailure } from './command-failure.js';
import { fetchImage } from './image-fetch.js';
import { DedupeStore } from '../callbacks/dedupe.js';
import { startReceiver, type CallbackContext, type Receiver } from '../callbacks/receiver.js';
import { discoverDevices, mergeDevices, type MergedDevices } from '../cloud/discovery.js';
import { CloudHttpClient } from '../cloud/http-client.js';
import { WebhookRegistrar } from '../cloud/registrations.js';
import { operateLock } from '../cloud/remote-operate.js';
import { ConcurrencyPool, realSleep } from '../cloud/retry.js';
import { checkPublicUrl } from '../cloud/self-check.js';
import { TokenManager, type LinkState } from '../cloud/token-manager.js';
import { TOKENS_FILE } from '../cloud/token-store.js';
import { WebhookSecret } from '../cloud/webhook-secret.js';
import type { LockAccessConfig } from '../config.js';
import { callbackUrls } from '../config.js';
import { isDoorbellEvent, isLockEvent, type DeviceEvent } from '../devices/events.js';
import { flushContextSaves } from '../devices/persist-context.js';
import { EventLog } from '../ui/event-log.js';
import { LogLimiter } from './log-limiter.js';
import { describeEvent } from '../devices/event-words.js';
import { StatusWriter } from '../ui/status.js';
import { Storage } from '../storage.js';

export interface RuntimeOptions {
  api: API;
  log: Logging;
  config: LockAccessConfig;
  cachedAccessories: readonly PlatformAccessory[];
  pluginName: string;
  platformName: string;
}

/** Registrations are confirmed again this often even when nothing changed (the registrar re-sends those older than a day). */
const RECONCILE_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** How often the token file is checked for a link or unlink made in the settings UI. */
const TOKEN_FILE_POLL_MS = 5_000;
/** State refreshes at start-up: a few at once is plenty and stays clear of rate limits. */
const STATUS_REFRESH_CONCURRENCY = 4;

const LINK_MESSAGES: Record<LinkState, string> = {
  linked: 'Linked to your Lock Access account.',
  unlinked: 'Not linked: open the plugin settings and link your Lock Access account, or paste a refresh token.',
  reauthorizationNeeded: 'Re-authorization needed: the service no longer accepts the stored tokens. Open the plugin settings and link the account again (or paste a new refresh token).',
};

export class PluginRuntime {
  private readonly instanceNonce = randomBytes(16).toString('hex');
  private readonly storage: Storage;
  private status: StatusWriter | undefined;
  private eventLog: EventLog | undefined;
  private tokens: TokenManager | undefined;
  private client: CloudHttpClient | undefined;
  private registrar: WebhookRegistrar | undefined;
  private registry: AccessoryRegistry | undefined;
  private dedupe: DedupeStore | undefined;
  private receiver: Receiver | undefined;
  private secret: WebhookSecret | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private readonly tokensFile: string;
  private converging: Promise<void> | undefined;
  private convergeAgain = false;
  private stopped = false;
  /** The log for lines written per event, held to a household pace. */
  private readonly eventLines: LogLimiter;
  private idle = false;
  /** Locks added or removed at run time by user-webhook membership callbacks. */
  private readonly addedLocks = new Set<string>();
  private readonly removedLocks = new Set<string>();
  private discoveredNames = new Map<string, string>();
  private sources = new Map<string, 'config' | 'service' | 'both'>();

  constructor(private readonly options: RuntimeOptions) {
    this.storage = Storage.under(options.api.user.storagePath());
    this.tokensFile = this.storage.file(TOKENS_FILE);
    this.eventLines = new LogLimiter(options.log);
  }

  private newRegistrar(): WebhookRegistrar | undefined {
    const { config, log } = this.options;
    if (!this.client || !this.secret) return undefined;
    return new WebhookRegistrar({ client: this.client, storage: this.storage, clientId: config.clientId, publicUrl: config.webhook.publicUrl, secret: this.secret, log });
  }

  async start(): Promise<void> {
    const { api, log, config } = this.options;
    this.status = await StatusWriter.open(this.storage, { log });
    this.eventLog = await EventLog.open(this.storage, { log });

    const tokens = new TokenManager({
      storage: this.storage,
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      seeds: { refreshToken: config.refreshToken, accessToken: config.accessToken },
      log,
    });
    this.tokens = tokens;
    const client = new CloudHttpClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, tokens, log });
    this.client = client;
    const secret = await WebhookSecret.load(this.storage);
    this.secret = secret;
    this.registrar = this.newRegistrar();

    this.registry = new AccessoryRegistry({
      api,
      log,
      pluginName: this.options.pluginName,
      platformName: this.options.platformName,
      cached: this.options.cachedAccessories,
      deps: { api, log: this.eventLines, operate: (lockId, action) => operateLock(client, lockId, action), describeCommandFailure, fetchImage },
    });
    // Serve what we know at once: configured devices plus those cached from the last run.
    this.registry.sync(this.initialDevices(), !config.discoverDevices);
    this.publishDevices();

    this.dedupe = await DedupeStore.open({ storage: this.storage, log });
    try {
      this.receiver = await startReceiver({
        webhook: config.webhook,
        apiKey: config.apiKey,
        callbackToken: () => secret.token,
        instanceNonce: this.instanceNonce,
        dedupe: this.dedupe,
        log,
        onEvents: (events, context) => {
          this.onEvents(events, context);
        },
      });
      log.info(`Webhook listener ready on ${config.webhook.listenHost}:${this.receiver.port}, reachable as ${config.webhook.publicUrl}`);
      this.status.update({ receiver: { listening: true, listenAddress: `${config.webhook.listenHost}:${this.receiver.port}` } });
    } catch (error) {
      log.error(`The webhook listener could not start on ${config.webhook.listenHost}:${config.webhook.listenPort} (${messageOf(error)}). Choose a free webhook.listenPort in the plugin settings; until then no events arrive.`);
      this.status.update({ receiver: { listening: false } });
    }

    tokens.onStateChange((state) => {
      this.onLinkState(state);
    });
    const state = await tokens.start();
    // The settings UI server links and unlinks in its own process, through the same token file.
    watchFile(this.tokensFile, { interval: TOKEN_FILE_POLL_MS, persistent: false }, () => {
      void tokens.syncWithStore();
    });
    this.publishLink(state);
    if (state === 'linked') this.converge();
    this.reconcileTimer = setInterval(() => {
      if (this.tokens?.state === 'linked' && !this.idle) this.converge();
    }, RECONCILE_INTERVAL_MS);
    this.reconcileTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    unwatchFile(this.tokensFile);
    this.tokens?.stop();
    this.registrar?.stop();
    // Stop taking callbacks first: one answered 200 must still reach HomeKit and the cache, while
    // the service sends those refused during closing (503) again later.
    await this.receiver?.close().catch(() => undefined);
    // The events of callbacks answered just before closing are applied on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    flushContextSaves(this.options.api);
    this.registry?.disposeAll();
    this.eventLines.flush();
    this.publishReceiverStats();
    await Promise.allSettled([this.dedupe?.close(), this.eventLog?.flush(), this.status?.flush()]);
  }

  /** Configured (not hidden) devices plus devices cached from the last run that config does not hide. */
  private initialDevices(): WantedDevice[] {
    const { config } = this.options;
    const fromConfig = this.configDevices();
    const hidden = new Set([...config.locks.filter((l) => l.hidden).map((l) => `lock:${l.id}`), ...config.doorbells.filter((d) => d.hidden).map((d) => `doorbell:${d.id}`)]);
    const known = new Set(fromConfig.map((d) => `${d.kind}:${d.id}`));
    const cached = config.discoverDevices ? (this.registry?.cachedDevices() ?? []) : [];
    return [...fromConfig, ...cached.filter((d) => !known.has(`${d.kind}:${d.id}`) && !hidden.has(`${d.kind}:${d.id}`))];
  }

  private configDevices(): WantedDevice[] {
    return toWanted(mergeDevices(this.options.config, undefined));
  }

  /** Runs discovery, registration, self-check and the state refresh; one run at a time, repeated once if asked meanwhile. */
  private converge(): void {
    if (this.stopped || this.idle) return;
    if (this.converging) {
      this.convergeAgain = true;
      return;
    }
    this.converging = this.convergeOnce()
      .catch((error: unknown) => {
        this.options.log.error(`Lock Access could not finish setting up with the service (${messageOf(error)}); it tries again later.`);
      })
      .finally(() => {
        this.converging = undefined;
        if (this.convergeAgain && !this.stopped) {
          this.convergeAgain = false;
          this.converge();
        }
      });
  }

  private async convergeOnce(): Promise<void> {
    const { config, log } = this.options;
    const registry = this.registry;
    const registrar = this.registrar;
    const client = this.client;
    if (!registry || !registrar || !client) return;
    const firstRun = this.firstConverge;
    this.firstConverge = false;

    let devices = this.initialDevices();
    let sweep = !config.discoverDevices;
    if (config.discoverDevices) {
      try {
        const discovered = await discoverDevices(client);
        const merged = mergeDevices(config, discovered);
        this.sources = new Map([...merged.locks.map((d) => [`lock:${d.id}`, d.source] as const), ...merged.doorbells.map((d) => [`doorbell:${d.id}`, d.source] as const)]);
        this.discoveredNames = new Map(discovered.locks.flatMap((d) => (d.name === undefined ? [] : [[`lock:${d.id}`, d.name] as const])));
        devices = toWanted(merged);
        sweep = true;
      } catch (error) {
        log.warn(`Could not ask the service for your devices (${messageOf(error)}); using the configured and cached ones for now.`);
      }
    }
    devices = this.applyMembershipChanges(devices);
    if (this.stopped) return;
    registry.sync(devices, sweep);
    this.publishDevices();

    // Unlinking may have happened while discovery ran.
    if (this.isIdle()) return;
    const wanted = { locks: registry.lockIds(), doorbells: registry.doorbellIds(), user: config.userWebhook };
    await registrar.reconcile(wanted);
    this.publishRegistrations();

    if (firstRun && !this.isIdle()) {
      await this.runSelfCheck();
      if (config.refreshStateOnStart) await this.refreshLockStates(registry.lockIds());
    }
  }

  private firstConverge = true;

  /** A method, not a field read, because unlinking can happen while a run awaits. */
  private isIdle(): boolean {
    return this.idle;
  }

  private applyMembershipChanges(devices: WantedDevice[]): WantedDevice[] {
    const result = devices.filter((d) => !(d.kind === 'lock' && this.removedLocks.has(d.id)));
    for (const id of this.addedLocks) {
      if (!result.some((d) => d.kind === 'lock' && d.id === id) && !this.isHidden('lock', id)) {
        result.push({ kind: 'lock', id, name: this.discoveredNames.get(`lock:${id}`) ?? `Lock ${id}`, doorSensor: false });
      }
    }
    return result;
  }

  private isHidden(kind: 'lock' | 'doorbell', id: string): boolean {
    const entries = kind === 'lock' ? this.options.config.locks : this.options.config.doorbells;
    return entries.some((e) => e.id === id && e.hidden);
  }

  private async runSelfCheck(): Promise<void> {
    const { config, log } = this.options;
    if (!this.receiver) return;
    const result = await checkPublicUrl({ publicUrl: config.webhook.publicUrl, instanceNonce: this.instanceNonce });
    const url = callbackUrls(config.webhook.publicUrl).health();
    if (result.ok) log.info(`Self-check passed: ${url} reaches this webhook listener.`);
    else log.warn(`Self-check failed: ${result.message}`);
    this.status?.update({ selfCheck: { state: result.ok ? 'ok' : 'failed', url, message: result.message, checkedAt: Date.now() } });
  }

  /** Asks every lock for its state; the service answers with `status` callbacks. */
  private async refreshLockStates(lockIds: readonly string[]): Promise<void> {
    const client = this.client;
    if (!client || lockIds.length === 0) return;
    const pool = new ConcurrencyPool({ concurrency: STATUS_REFRESH_CONCURRENCY, sleep: realSleep, now: Date.now });
    await Promise.all(
      lockIds.map((lockId) =>
        pool.run(async () => {
          try {
            await operateLock(client, lockId, 'status');
          } catch (error) {
            this.options.log.warn(`${this.registry?.nameOf('lock', lockId) ?? lockId}: could not ask for the current state (${messageOf(error)}).`);
          }
        }),
      ),
    );
  }

  /** Called by the receiver after it has acknowledged a callback. */
  private onEvents(events: DeviceEvent[], context: CallbackContext): void {
    const registry = this.registry;
    if (!registry || this.idle) return;
    for (const event of events) {
      if (isLockEvent(event)) {
        if (event.kind === 'membership' && event.viaUserHook && (event.change === 'added' || event.change === 'removed')) {
          this.onMembership(event.lockId, event.change);
        }
        const lock = registry.lock(event.lockId);
        const name = registry.nameOf('lock', event.lockId);
        // Accessories log what they apply; events for devices not in HomeKit are logged here.
        if (lock) lock.apply(event, context);
        else this.eventLines.info(`${name}: ${describeEvent(event, name)} (not shown in HomeKit)`);
        this.record('lock', event.lockId, name, event, context);
        if (event.kind === 'online') this.publishDevices();
      } else if (isDoorbellEvent(event)) {
        const doorbell = registry.doorbell(event.doorbellId);
        const name = registry.nameOf('doorbell', event.doorbellId);
        if (doorbell) doorbell.apply(event, context);
        else this.eventLines.info(`${name}: ${describeEvent(event, name)} (not shown in HomeKit)`);
        this.record('doorbell', event.doorbellId, name, event, context);
      } else {
        this.record('account', 'account', 'Account', event, context);
        void this.unlink('the Lock Access account was deleted');
      }
    }
    this.publishReceiverStats();
  }

  private record(kind: 'lock' | 'doorbell' | 'account', id: string, name: string, event: DeviceEvent, context: CallbackContext): void {
    this.eventLog?.record({ deviceKind: kind, deviceId: id, deviceName: name, event, at: event.at ?? context.receivedAt });
    if (kind !== 'account') this.status?.callbackAccepted({ deviceKind: kind, deviceId: id, at: context.receivedAt, kind: event.kind });
  }

  private onMembership(lockId: string, change: 'added' | 'removed'): void {
    if (change === 'added') {
      this.removedLocks.delete(lockId);
      this.addedLocks.add(lockId);
    } else {
      this.addedLocks.delete(lockId);
      this.removedLocks.add(lockId);
      this.registry?.remove('lock', lockId);
    }
    this.converge();
  }

  /** Deletes every registration and the tokens, then stays idle (UI unlink, or the account was deleted). */
  async unlink(reason: string): Promise<void> {
    if (this.idle) return;
    this.idle = true;
    const { log } = this.options;
    const registrar = this.registrar;
    this.registrar = undefined;
    try {
      await registrar?.unlinkAll();
    } catch (error) {
      log.warn(`Some webhook registrations could not be deleted (${messageOf(error)}).`);
    }
    await this.tokens?.unlink();
    this.status?.update({ registrations: [] });
    log.warn(`Lock Access is unlinked because ${reason}: registrations and tokens are deleted and the plugin is idle. Link the account again in the plugin settings to resume.`);
  }

  private onLinkState(state: LinkState): void {
    const { log } = this.options;
    this.publishLink(state);
    if (state === 'linked') {
      if (this.idle) {
        // Linked again in the settings UI: a fresh registrar reads the ledger that process left.
        this.idle = false;
        this.registrar = this.newRegistrar();
        this.firstConverge = true;
        log.info('Lock Access is linked again: registering webhooks.');
      }
      this.converge();
    } else if (state === 'unlinked' && !this.idle) {
      // Unlinked in the settings UI, which already deleted the registrations: stop touching them.
      this.idle = true;
      this.registrar?.stop();
      this.registrar = undefined;
      log.warn('Lock Access was unlinked in the plugin settings: the plugin is idle until the account is linked again.');
    }
  }

  private publishLink(state: LinkState): void {
    const status = this.tokens?.status();
    this.status?.update({ link: { state, message: status?.message ?? LINK_MESSAGES[state], since: Date.now() } });
  }

  private publishDevices(): void {
    const registry = this.registry;
    if (!registry) return;
    const devices = [
      ...registry.lockIds().map((id) => ({ kind: 'lock' as const, id, online: registry.lock(id)?.state.online })),
      ...registry.doorbellIds().map((id) => ({ kind: 'doorbell' as const, id, online: undefined })),
    ].map((d) => {
      const source = this.sources.get(`${d.kind}:${d.id}`) ?? 'config';
      return { kind: d.kind, id: d.id, name: registry.nameOf(d.kind, d.id), source, hidden: false, online: d.online };
    });
    this.status?.update({ devices });
  }

  private publishRegistrations(): void {
    const registrar = this.registrar;
    if (!registrar || !this.status) return;
    this.status.update({ registrations: registrar.status() });
  }

  private publishReceiverStats(): void {
    const stats = this.receiver?.stats;
    if (!stats || !this.status) return;
    this.status.receiverCounters(stats.duplicates, stats.rejected);
  }
}

function toWanted(merged: MergedDevices): WantedDevice[] {
  return [
    ...merged.locks.map((d): WantedDevice => ({ kind: 'lock', id: d.id, name: d.name, doorSensor: d.doorSensor })),
    ...merged.doorbells.map((d): WantedDevice => ({ kind: 'doorbell', id: d.id, name: d.name, motionTimeoutSeconds: d.motionTimeoutSeconds })),
  ];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

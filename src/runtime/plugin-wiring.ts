// The running plugin: wires storage, tokens, the cloud client, registrations, the callback receiver,
// the event router and the accessories. Start-up never waits for the cloud: accessories are served
// from the cache at once; discovery, registration, the self-check and the state refresh run behind.
import { randomBytes } from 'node:crypto';
import { unwatchFile, watchFile } from 'node:fs';

import type { API, PlatformAccessory } from 'homebridge';

import { DedupeStore } from '../callbacks/dedupe.js';
import type { EventRouter } from '../callbacks/event-router.js';
import { startReceiver, type Receiver } from '../callbacks/receiver.js';
import { describeCommandFailure } from '../cloud/command-failure.js';
import { CloudHttpClient } from '../cloud/http/http-client.js';
import { fetchImage } from '../cloud/image-fetch.js';
import { LinkControl } from '../cloud/link-control.js';
import { WebhookRegistrar } from '../cloud/registrations/registrations.js';
import { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import { operateLock } from '../cloud/remote-operate.js';
import { selfCheckOnce } from '../cloud/startup-checks.js';
import { TokenManager } from '../cloud/tokens/token-manager.js';
import { TOKENS_FILE } from '../cloud/tokens/token-store.js';
import { peopleOf, type LockAccessConfig } from '../config.js';
import { AccessoryRegistry } from '../homekit/accessory-registry.js';
import { deliveryAccessoryUuid } from '../homekit/delivery-sensor.js';
import { moveContextToRecords } from '../storage/context-migration.js';
import { DeviceRecords } from '../storage/device-records.js';
import { DeviceRegistry, type DeviceView } from '../model/device-registry.js';
import { EventLog } from '../status/event-log.js';
import { SelfCheckWatch } from '../status/self-check-watch.js';
import { StatusPublisher } from '../status/status-publisher.js';
import { StatusWriter } from '../status/status.js';
import { Storage } from '../storage.js';
import { systemClock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import { LogLimiter } from '../util/log-limiter.js';
import type { Logger } from '../util/logger.js';
import { pluginVersion } from '../util/plugin-version.js';
import { Convergence } from './converge-with-account.js';
import { routeEvents } from './event-routing.js';
import { Reach } from './reach.js';
import { startDelivery, type Delivery } from './delivery.js';
import { startVideo } from './video.js';
import type { VideoRoom } from '../video/video-room.js';

export interface RuntimeOptions {
  api: API;
  log: Logger;
  config: LockAccessConfig;
  cachedAccessories: readonly PlatformAccessory[];
  pluginName: string;
  platformName: string;
  /** Further views of the device set (Matter), made once the device registry exists. */
  views?: readonly ((registry: DeviceRegistry) => DeviceView)[];
}

/** Registrations are confirmed again this often even when nothing changed (the registrar re-sends those older than a day). */
const RECONCILE_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** How often the token file is checked for a link or unlink made in the settings UI. */
const TOKEN_FILE_POLL_MS = 5_000;

export class Runtime {
  private readonly instanceNonce = randomBytes(16).toString('hex');
  private readonly storage: Storage;
  private readonly tokensFile: string;
  /** The log for lines written per event, held to a household pace. */
  private readonly eventLines: LogLimiter;
  private status: StatusWriter | undefined;
  private eventLog: EventLog | undefined;
  private records: DeviceRecords | undefined;
  private statusPublisher: StatusPublisher | undefined;
  private tokens: TokenManager | undefined;
  private link: LinkControl | undefined;
  private devices: DeviceRegistry | undefined;
  private convergence: Convergence | undefined;
  private dedupe: DedupeStore | undefined;
  private receiver: Receiver | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private selfChecks: SelfCheckWatch | undefined;
  private reach: Reach | undefined;
  private delivery: Delivery | undefined;
  private secret: WebhookSecret | undefined;
  private video: VideoRoom | undefined;

  constructor(private readonly options: RuntimeOptions) {
    this.storage = Storage.under(options.api.user.storagePath());
    this.tokensFile = this.storage.file(TOKENS_FILE);
    this.eventLines = new LogLimiter(options.log);
  }

  async start(): Promise<void> {
    const { status, eventLog, records } = await this.openFiles();
    const tokens = this.makeTokens();
    const client = new CloudHttpClient({ baseUrl: this.options.config.baseUrl, apiKey: this.options.config.apiKey, tokens, log: this.options.log });
    const secret = await WebhookSecret.load(this.storage, { log: this.options.log });
    this.secret = secret;
    // A token that could be read only later, or was replaced: every registration is sent again at
    // once, so callbacks do not carry an old token until the daily refresh.
    secret.onChange(() => this.convergence?.request());
    const publisher = new StatusPublisher({
      status,
      eventLog,
      linkMessage: () => tokens.status().message,
      linkProblem: () => tokens.status().problem,
      sourceOf: (key) => this.convergence?.sourceOf(key),
      receiverStats: () => this.receiver?.stats,
    });
    this.statusPublisher = publisher;
    const reach = this.makeReach(publisher);
    const link = this.makeLink(client, tokens, secret, publisher, reach);
    const registry = this.serveDevices(client, publisher, records, link);
    const router = routeEvents({ registry, publisher, link, log: this.options.log, eventLines: this.eventLines, convergence: () => this.convergence });
    await this.startListener(secret, router, publisher, status);
    await this.startLink(tokens, link, publisher);
    this.watchDelivery(client, tokens, link, registry, publisher, status);
  }

  /** Whether events still arrive: the delivery watch and its sensor in HomeKit. */
  private watchDelivery(client: CloudHttpClient, tokens: TokenManager, link: LinkControl, registry: DeviceRegistry, publisher: StatusPublisher, status: StatusWriter): void {
    const { api, log, config } = this.options;
    this.delivery = startDelivery({
      api, log, config, client, publisher,
      pluginName: this.options.pluginName,
      platformName: this.options.platformName,
      cached: this.options.cachedAccessories.find((accessory) => accessory.UUID === deliveryAccessoryUuid(api)),
      locks: () => registry.lockIds(),
      nameOf: (kind, id) => registry.nameOf(kind, id),
      registrar: () => link.registrar,
      linked: () => tokens.state === 'linked' && !link.idle,
      listening: () => this.receiver !== undefined,
      publicUrl: () => this.reach?.publicUrl,
      brokenWayIn: () => this.reach?.brokenWayIn,
      selfCheckWatch: () => this.selfCheckWatch(publisher),
      eventsMayBeMissed: () => {
        for (const id of registry.lockIds()) registry.lock(id)?.eventsMayBeMissed();
      },
      status: status.status,
    });
  }

  /** The status file, the event log and the devices' saved state, read before anything is served. */
  private async openFiles(): Promise<{ status: StatusWriter; eventLog: EventLog; records: DeviceRecords }> {
    const { api, log } = this.options;
    const status = await StatusWriter.open(this.storage, { log });
    this.status = status;
    // For the diagnostics file: the settings server cannot ask Homebridge itself.
    status.update({ versions: { plugin: pluginVersion(), homebridge: api.serverVersion, node: process.version } });
    const [eventLog, records] = await Promise.all([EventLog.open(this.storage, { log }), DeviceRecords.open(this.storage, log)]);
    this.eventLog = eventLog;
    this.records = records;
    if (await moveContextToRecords(this.options.cachedAccessories, records)) log.info('Moved the saved device state from the accessory cache to lock-access/devices.json.');
    return { status, eventLog, records };
  }

  private makeTokens(): TokenManager {
    const { config, log } = this.options;
    this.tokens = new TokenManager({
      storage: this.storage,
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      seeds: { refreshToken: config.refreshToken, accessToken: config.accessToken },
      log,
    });
    return this.tokens;
  }

  /** The public address: the configured one, or the tunnel's once it connects; registrations and the self-check follow each new one at once. */
  private makeReach(publisher: StatusPublisher): Reach {
    this.reach = new Reach({
      webhook: this.options.config.webhook,
      log: this.options.log,
      publish: (publicAddress) => {
        publisher.update({ publicAddress });
      },
      // A new address: registrations follow it at once, then the self-check and a delivery check
      // (callbacks through the old way in may have been lost).
      addressChanged: () => {
        if (this.stopped) return;
        const registrar = this.link?.idle === false ? this.link.registrar : undefined;
        void Promise.resolve(registrar?.addressChanged()).then((report) => {
          if (report !== undefined && !report.skipped) publisher.registrations(registrar?.status() ?? []);
          // refreshStateOnStart waited for an address to be registered at.
          void this.convergence?.registered(report);
          return this.delivery?.checkNow();
        });
        void this.selfCheckWatch(publisher).runNow();
      },
      wayInLost: () => this.delivery?.wayInChanged(),
    });
    return this.reach;
  }

  private makeLink(client: CloudHttpClient, tokens: TokenManager, secret: WebhookSecret, publisher: StatusPublisher, reach: Reach): LinkControl {
    const { config, log } = this.options;
    this.link = new LinkControl({
      log,
      status: publisher,
      newRegistrar: () => new WebhookRegistrar({ client, storage: this.storage, clientId: config.clientId, publicUrl: () => reach.publicUrl, secret, log }),
      tokens,
      converge: (asFirstRun) => this.convergence?.request(asFirstRun),
    });
    return this.link;
  }

  /** The devices and their views (HomeKit's accessories, Matter's endpoints), served at once from config and the last run. */
  private serveDevices(client: CloudHttpClient, publisher: StatusPublisher, records: DeviceRecords, link: LinkControl): DeviceRegistry {
    const { api, log, config } = this.options;
    const registry: DeviceRegistry = new DeviceRegistry({
      log: this.eventLines,
      clock: systemClock,
      records,
      people: peopleOf(config),
      operate: (lockId, action) => operateLock(client, lockId, action),
      describeCommandFailure,
      reachabilityChanged: () => {
        publisher.devices(registry);
      },
    });
    this.devices = registry;
    // The bridge-level "Lock Access" accessory is the delivery sensor's, not a device's.
    const cached = this.options.cachedAccessories.filter((accessory) => accessory.UUID !== deliveryAccessoryUuid(api));
    this.video = startVideo(config, log, client, publisher);
    const homekit = new AccessoryRegistry({ api, log, devices: registry, fetchImage, video: this.video, pluginName: this.options.pluginName, platformName: this.options.platformName, cached });
    for (const view of [homekit, ...(this.options.views ?? []).map((make) => make(registry))]) registry.attach(view);
    const convergence = new Convergence({
      config,
      log,
      client,
      registry,
      status: publisher,
      isIdle: () => link.idle,
      isStopped: () => this.stopped,
      registrar: () => link.registrar,
      listening: () => this.receiver !== undefined,
      instanceNonce: this.instanceNonce,
      publishDevices: () => {
        publisher.devices(registry);
      },
      // Without an address yet (a tunnel connecting), the address's arrival runs it.
      selfCheck: () => (this.reach?.publicUrl === undefined ? Promise.resolve() : this.selfCheckWatch(publisher).runNow()),
    });
    this.convergence = convergence;
    // Serve what we know at once: configured devices plus those cached from the last run.
    registry.sync(convergence.startupDevices(), !config.discoverDevices);
    publisher.devices(registry);
    return registry;
  }

  /** The webhook listener; a port in use is logged with what to change and never stops the start. */
  private async startListener(secret: WebhookSecret, router: EventRouter, publisher: StatusPublisher, status: StatusWriter): Promise<void> {
    const { config, log } = this.options;
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
          router.route(events, context);
        },
        // Refusals reach the status file within seconds, accepted callback or not.
        onRejected: () => {
          publisher.receiverStats();
        },
        onVerified: (key) => {
          this.delivery?.heard(key);
        },
      });
      log.info(`Webhook listener ready on ${config.webhook.listenHost}:${this.receiver.port}, reachable as ${this.reach?.describe() ?? ''}`);
      status.update({ receiver: { listening: true, listenAddress: `${config.webhook.listenHost}:${this.receiver.port}` } });
      this.reach?.listenerReady(this.receiver.port, this.receiver.url.startsWith('https:'));
    } catch (error) {
      log.error(`The webhook listener could not start on ${config.webhook.listenHost}:${config.webhook.listenPort} (${errorText(error)}). Choose a free webhook.listenPort in the plugin settings; until then no events arrive.`);
      status.update({ receiver: { listening: false } });
      this.reach?.listenerFailed();
    }
  }

  /** Tokens, then the link's follow-up (convergence now and every few hours); a link made in the settings UI is picked up from the token file. */
  private async startLink(tokens: TokenManager, link: LinkControl, publisher: StatusPublisher): Promise<void> {
    tokens.onStateChange((state) => {
      link.onLinkState(state);
    });
    // A setting to fix or tokens not saved yet change the message, not the state.
    tokens.onStatusChange(() => {
      publisher.link(tokens.state);
    });
    const state = await tokens.start();
    // The settings UI server links and unlinks in its own process, through the same token file.
    watchFile(this.tokensFile, { interval: TOKEN_FILE_POLL_MS, persistent: false }, () => {
      void tokens.syncWithStore();
    });
    publisher.link(state);
    if (state === 'linked') this.convergence?.request();
    this.reconcileTimer = setInterval(() => {
      if (tokens.state === 'linked' && !link.idle) this.convergence?.request();
    }, RECONCILE_INTERVAL_MS);
    this.reconcileTimer.unref();
  }

  /** The self-check of the public address, made on first use and then repeating on its own. */
  private selfCheckWatch(publisher: StatusPublisher): SelfCheckWatch {
    const { log } = this.options;
    this.selfChecks ??= new SelfCheckWatch({
      check: () => selfCheckOnce({ publicUrl: this.reach?.publicUrl ?? '', instanceNonce: this.instanceNonce }),
      publish: (record) => {
        publisher.update({ selfCheck: record });
      },
      log,
      now: Date.now,
      setTimer: (fn, ms) => setTimeout(fn, ms).unref(),
      clearTimer: (handle) => {
        clearTimeout(handle as NodeJS.Timeout);
      },
    });
    return this.selfChecks;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // First: every ffmpeg gets its SIGTERM now, before Homebridge's own exit can come.
    const videoStopped = this.video?.stop();
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    unwatchFile(this.tokensFile);
    this.tokens?.stop();
    this.link?.stop();
    this.selfChecks?.stop();
    // The tunnel closes with Homebridge; callbacks in flight through it are answered first below.
    const tunnelClosed = this.reach?.stop().catch(() => undefined);
    this.delivery?.stop();
    this.secret?.stop();
    // Stop taking callbacks first: one answered 200 must still reach HomeKit and the cache, while
    // the service sends those refused during closing (503) again later.
    await this.receiver?.close().catch(() => undefined);
    // The events of callbacks answered just before closing are applied on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    this.devices?.disposeAll();
    this.eventLines.flush();
    this.statusPublisher?.receiverStats();
    await Promise.allSettled([videoStopped, tunnelClosed, this.dedupe?.close(), this.eventLog?.flush(), this.status?.flush(), this.records?.close()]);
  }
}

// The status snapshot the settings UI shows (`status.json`): link state, the listener's self-check,
// each webhook registration, receiver counters and the device list. The plugin updates it through
// StatusWriter (debounced, atomic); the UI server reads it with readStatus. It never holds a secret:
// no tokens, keys or callback token, only states, ids, names, URLs without credentials and counts.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';

export const STATUS_FILE = 'status.json';
export const DEFAULT_STATUS_DEBOUNCE_MS = 500;
/** While callbacks keep coming, the file is still written this often. */
const MAX_WRITE_DELAY_MS = 10_000;

/**
 * The file's schema, made when the file is read or written and dropped after: it is some 140 zod
 * objects, and the plugin writes the file only now and then, so keeping them would cost memory all
 * the time for a check made seconds apart at most.
 */
export function statusSchema() {
  const linkStatusSchema = z.object({
    /** 'checkSettings': the token service refused the client id or secret; the refresh token is kept. */
    state: z.enum(['notConfigured', 'unlinked', 'linked', 'reauthorizationNeeded', 'checkSettings']),
    /** Plain words, including what to do when something is wrong. */
    message: z.string(),
    since: z.number().optional(),
  });

  const selfCheckSchema = z.object({
    state: z.enum(['pending', 'ok', 'failed']),
    /** The public health URL that was checked. */
    url: z.string().optional(),
    message: z.string(),
    checkedAt: z.number().optional(),
    /** When a check last passed (kept through later failures). */
    lastPassedAt: z.number().optional(),
    /** When the next check runs. */
    nextAt: z.number().optional(),
    /** The last few results, newest first. */
    history: z.array(z.object({ at: z.number(), ok: z.boolean(), message: z.string() })).optional(),
  });

  /** Whether events arrive (the delivery watch); absent while the watch is off. */
  const deliverySchema = z.object({
    state: z.enum(['unknown', 'arriving', 'notArriving']),
    /** When this state began. */
    since: z.number(),
    checkEveryMinutes: z.number(),
    /** The last verified callback known at the last change or check. */
    lastHeardAt: z.number().optional(),
    lastCheck: z
      .object({
        at: z.number(),
        /** `probe`: a lock was asked for its state; `registrations`: no lock to ask (doorbells only); `wayIn`: the way in could not be built. */
        how: z.enum(['probe', 'registrations', 'wayIn']),
        lockId: z.string().optional(),
        outcome: z.enum(['arrived', 'nothing', 'notAsked', 'checked']),
        message: z.string(),
      })
      .optional(),
    /** What was done and found when events stopped arriving, in words. */
    checked: z.object({ registrations: z.string(), selfCheck: z.string() }).optional(),
    nextCheckAt: z.number().optional(),
  });

  const registrationStatusSchema = z.object({
    kind: z.enum(['lock', 'doorbell', 'user']),
    /** Device id; empty for the user registration. */
    id: z.string(),
    name: z.string().optional(),
    /** The callback URL registered with the service. */
    url: z.string().optional(),
    /** Same words as WebhookRegistrar.status(), so its list can be written as it is. */
    state: z.enum(['pending', 'registered', 'failed', 'deleting']),
    /** ISO time of the last confirmation by the service. */
    lastSuccessAt: z.string().optional(),
    lastError: z.string().optional(),
  });

  const lastCallbackSchema = z.object({
    deviceKind: z.enum(['lock', 'doorbell', 'user']),
    deviceId: z.string(),
    at: z.number(),
    /** What it was, e.g. "lockState". */
    kind: z.string().optional(),
  });

  const receiverStatusSchema = z.object({
    listening: z.boolean(),
    /** Where the listener is bound, e.g. "0.0.0.0:8582". */
    listenAddress: z.string().optional(),
    accepted: z.number().int().nonnegative(),
    duplicates: z.number().int().nonnegative(),
    /** Rejected callbacks counted by reason (e.g. "bad-signature", "stale-timestamp"). */
    rejected: z.record(z.string(), z.number().int().nonnegative()),
    /** The last refused callback; for a stale or future signature, this machine's clock minus its `t`. */
    lastRejection: z.object({ at: z.number(), reason: z.string(), clockOffsetMs: z.number().optional(), device: z.string().optional() }).optional(),
    /** The last request to a path the listener does not serve (path only, never a query). */
    lastUnknownPath: z.object({ at: z.number(), path: z.string() }).optional(),
    /** Keyed by "lock:ID", "doorbell:ID" or "user:". */
    lastCallbacks: z.record(z.string(), lastCallbackSchema),
  });

  /** Where the service calls this plugin: webhook.publicUrl, or the built-in tunnel and its state. */
  const publicAddressSchema = z.object({
    /** Without credentials; absent while a tunnel has not connected yet. */
    url: z.string().optional(),
    via: z.enum(['config', 'ngrok']),
    tunnel: z
      .object({
        state: z.enum(['connecting', 'connected', 'reconnecting', 'failed', 'closed']),
        /** Plain words with what to do; never the authtoken. */
        message: z.string(),
        since: z.number(),
        nextTryAt: z.number().optional(),
      })
      .optional(),
  });

  const deviceStatusSchema = z.object({
    kind: z.enum(['lock', 'doorbell']),
    id: z.string(),
    name: z.string(),
    /** Where the plugin knows it from. */
    source: z.enum(['config', 'service', 'both']),
    hidden: z.boolean().default(false),
    online: z.boolean().optional(),
  });

  /** Whether doorbell video works, and with which ffmpeg (its path is no secret; its command lines are). */
  const videoStatusSchema = z.object({
    state: z.enum(['checking', 'ready', 'unavailable']),
    ffmpegPath: z.string().optional(),
    ffmpegVersion: z.string().optional(),
    h264Encoder: z.string().optional(),
    /** Why video is off, in words. */
    problem: z.string().optional(),
    secureVideo: z.boolean().optional(),
    replayMinutes: z.number().optional(),
  });

  const statusSchema = z.object({
    version: z.literal(1),
    updatedAt: z.number(),
    /** The plugin process that wrote it, so the UI can tell a stale file from a live one. */
    pid: z.number().optional(),
    startedAt: z.number().optional(),
    /** What runs: for the diagnostics file (the settings server cannot ask Homebridge itself). */
    versions: z.object({ plugin: z.string(), homebridge: z.string().optional(), node: z.string() }).optional(),
    link: linkStatusSchema,
    selfCheck: selfCheckSchema.optional(),
    publicAddress: publicAddressSchema.optional(),
    delivery: deliverySchema.optional(),
    registrations: z.array(registrationStatusSchema),
    receiver: receiverStatusSchema,
    devices: z.array(deviceStatusSchema),
    video: videoStatusSchema.optional(),
  });
  return statusSchema;
}

export type Status = z.infer<ReturnType<typeof statusSchema>>;
export type LinkStatus = Status['link'];
export type SelfCheckStatus = NonNullable<Status['selfCheck']>;
export type DeliveryStatus = NonNullable<Status['delivery']>;
/** A registration as the status file shows it (with the device name the registrar does not know). */
export type RegistrationRow = Status['registrations'][number];
export type ReceiverStatus = Status['receiver'];
export type DeviceStatus = Status['devices'][number];
export type VideoStatus = NonNullable<Status['video']>;
export type PublicAddressStatus = NonNullable<Status['publicAddress']>;
type LastCallback = ReceiverStatus['lastCallbacks'][string];

/** Top-level fields replace; `receiver` merges field by field. */
export type StatusPatch = Partial<Omit<Status, 'version' | 'updatedAt' | 'receiver'>> & { receiver?: Partial<ReceiverStatus> };

export function emptyStatus(now: number): Status {
  return {
    version: 1,
    updatedAt: now,
    link: { state: 'unlinked', message: 'Not linked yet: link your Lock Access account in the plugin settings.' },
    registrations: [],
    receiver: { listening: false, accepted: 0, duplicates: 0, rejected: {}, lastCallbacks: {} },
    devices: [],
  };
}

/**
 * Applies a patch (pure). The types already hold the shape, so nothing is re-validated here: this
 * runs for every accepted callback, and the schema is checked where the file is read back.
 */
export function applyPatch(status: Status, patch: StatusPatch, now: number): Status {
  const { receiver, ...rest } = patch;
  return {
    ...status,
    ...rest,
    receiver: receiver ? { ...status.receiver, ...receiver } : status.receiver,
    updatedAt: now,
  };
}

/** Reads the snapshot for the UI; undefined when the plugin has not written one (or it is unreadable). */
export async function readStatus(storage: Storage): Promise<Status | undefined> {
  try {
    return await storage.read(STATUS_FILE, statusSchema());
  } catch {
    return undefined;
  }
}

export interface StatusWriterOptions {
  debounceMs?: number;
  now?: () => number;
  log?: Pick<Logger, 'warn'>;
}

export class StatusWriter {
  private current: Status;
  private readonly saver: QuietWriter;
  private readonly now: () => number;

  private constructor(
    private readonly storage: Storage,
    private readonly options: StatusWriterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.current = emptyStatus(this.now());
    this.saver = new QuietWriter({
      write: () => this.write(),
      quietMs: options.debounceMs ?? DEFAULT_STATUS_DEBOUNCE_MS,
      maxDelayMs: MAX_WRITE_DELAY_MS,
      onError: (error) => this.options.log?.warn(`The status for the settings UI could not be saved (${errorText(error)}).`),
    });
  }

  /**
   * Starts a fresh snapshot for this run. Receiver counters start at zero; the last callback per
   * device is carried over from the previous run, because "when did we last hear from it" outlives
   * a restart.
   */
  static async open(storage: Storage, options: StatusWriterOptions = {}): Promise<StatusWriter> {
    const writer = new StatusWriter(storage, options);
    const previous = await readStatus(storage);
    const now = writer.now();
    writer.current = {
      ...emptyStatus(now),
      pid: process.pid,
      startedAt: now,
      receiver: { ...emptyStatus(now).receiver, lastCallbacks: previous?.receiver.lastCallbacks ?? {} },
    };
    writer.saver.touch();
    return writer;
  }

  /** The snapshot as it will be written. */
  get status(): Status {
    return structuredClone(this.current);
  }

  update(patch: StatusPatch): void {
    this.current = applyPatch(this.current, patch, this.now());
    this.saver.touch();
  }

  private touch(): void {
    this.current.updatedAt = this.now();
    this.saver.touch();
  }

  /** Replaces (or adds) the registration of one device kind and id. */
  updateRegistration(registration: RegistrationRow): void {
    const same = (r: RegistrationRow) => r.kind === registration.kind && r.id === registration.id;
    const others = this.current.registrations.filter((r) => !same(r));
    const previous = this.current.registrations.find(same);
    // Keep the last success when a later attempt fails, so the UI can say "worked at 10:02, failing since".
    const merged: RegistrationRow = { ...previous, ...registration };
    if (registration.state === 'registered') delete merged.lastError;
    this.update({ registrations: [...others, merged] });
  }

  /** An accepted callback (not a duplicate) for a device. */
  callbackAccepted(callback: LastCallback): void {
    const key = `${callback.deviceKind}:${callback.deviceKind === 'user' ? '' : callback.deviceId}`;
    // Changed in place: this runs for every callback, and copying the entries of every device each
    // time showed in profiles. Nothing outside holds `current` (the getter hands out a copy).
    const receiver = this.current.receiver;
    receiver.accepted += 1;
    receiver.lastCallbacks[key] = callback;
    this.touch();
  }

  /** The receiver's own counters, written only when they changed (called for every callback). */
  receiverCounters(duplicates: number, rejected: Readonly<Record<string, number>>, lastRejection?: ReceiverStatus['lastRejection'], lastUnknownPath?: ReceiverStatus['lastUnknownPath']): void {
    const receiver = this.current.receiver;
    const changed = receiver.duplicates !== duplicates
      || countsDiffer(rejected, receiver.rejected)
      || receiver.lastRejection?.at !== lastRejection?.at
      || receiver.lastUnknownPath?.at !== lastUnknownPath?.at;
    if (!changed) return;
    const patch: Partial<ReceiverStatus> = { duplicates, rejected: { ...rejected } };
    if (lastRejection !== undefined) patch.lastRejection = { ...lastRejection };
    if (lastUnknownPath !== undefined) patch.lastUnknownPath = { ...lastUnknownPath };
    this.update({ receiver: patch });
  }

  /** Writes pending changes now (call on shutdown). */
  flush(): Promise<void> {
    return this.saver.flush();
  }

  /** One quiet write (a burst of callbacks is one write, after the burst). */
  private async write(): Promise<void> {
    // Validated here, once per write, rather than on every update. A bad shape is reported and
    // not retried: the next change writes again, and the file keeps the last valid snapshot.
    const checked = statusSchema().safeParse(this.current);
    if (!checked.success) {
      this.options.log?.warn(`The status for the settings UI was not saved: it has an unexpected shape (${checked.error.issues.map((i) => i.path.join('.')).join(', ')}).`);
      return;
    }
    await this.storage.write(STATUS_FILE, checked.data);
  }
}

/** Whether any count in `counts` differs from `shown` (every callback asks: no arrays made). */
function countsDiffer(counts: Readonly<Record<string, number>>, shown: Readonly<Record<string, number>>): boolean {
  for (const reason in counts) if (shown[reason] !== counts[reason]) return true;
  return false;
}

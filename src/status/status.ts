// The status snapshot the settings UI shows (`status.json`): link state, the listener's self-check,
// each webhook registration, receiver counters and the device list. The plugin updates it through
// StatusWriter (debounced, atomic); the UI server reads it with readStatus. It never holds a secret:
// no tokens, keys or callback token, only states, ids, names, URLs without credentials and counts.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { QuietWriter } from '../util/quiet-writer.js';
import { linkMessage } from '../cloud/link-messages.js';
import { STATUS_VERSION, statusSchema } from './status-shape.js';
import { upgradeStatus } from './status-upgrade.js';

export const STATUS_FILE = 'status.json';
export const DEFAULT_STATUS_DEBOUNCE_MS = 500;
/** While callbacks keep coming, the file is still written this often. */
const MAX_WRITE_DELAY_MS = 10_000;

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
    version: STATUS_VERSION,
    updatedAt: now,
    link: { state: 'unlinked', message: linkMessage('link.notYet') },
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

/** Reads the snapshot for the UI, also one an earlier version wrote; undefined when the plugin has not written one (or it is unreadable). */
export async function readStatus(storage: Storage): Promise<Status | undefined> {
  try {
    return await storage.read(STATUS_FILE, z.preprocess(upgradeStatus, statusSchema()));
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
    // The device's entry is updated, not replaced: a new one per callback would outlive the young
    // generation (it stays until that device's next callback) and add to every major collection.
    const kept = receiver.lastCallbacks[key];
    if (kept === undefined || kept.deviceKind !== callback.deviceKind) {
      receiver.lastCallbacks[key] = { ...callback };
    } else {
      kept.deviceId = callback.deviceId;
      kept.at = callback.at;
      if (callback.kind === undefined) delete kept.kind;
      else kept.kind = callback.kind;
    }
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

// Rejections are never silent: the service never retries a 401, so every
// refused callback is an event lost for good. A refusal that points at something the user can fix
// (a wrong clock, a wrong API key, registrations carrying another token) becomes one warning with
// what to do, at most once an hour per cause. Pure: the clock comes in with each call.
import type { RejectionReason } from './accept.js';

/** What the user can fix, by the reason the pipeline gave. */
export type RejectionCause = 'clock' | 'signature' | 'token';

const CAUSE_OF: Partial<Record<RejectionReason, RejectionCause>> = {
  'stale-timestamp': 'clock',
  'bad-signature': 'signature',
  'bad-token': 'token',
  'missing-token': 'token',
};

export const REJECTION_WARNING_INTERVAL_MS = 60 * 60 * 1000;

export function causeOf(reason: string): RejectionCause | undefined {
  return Object.hasOwn(CAUSE_OF, reason) ? CAUSE_OF[reason as RejectionReason] : undefined;
}

/** "5 min 12 s ahead of" / "2 h 3 min behind": the offset as people read it. */
export function describeOffset(offsetMs: number): string {
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  const h = Math.floor(seconds / 3600);
  const min = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = h > 0 ? [`${h} h`, `${min} min`] : min > 0 ? [`${min} min`, `${s} s`] : [`${s} s`];
  return `${parts.join(' ')} ${offsetMs >= 0 ? 'ahead of' : 'behind'}`;
}

function warningText(cause: RejectionCause, count: number, offsetMs: number | undefined): string {
  const lost = `${count} callback(s) refused since start-up, each one lost for good (the service does not retry a refused callback)`;
  switch (cause) {
    case 'clock':
      return `Webhook callbacks are refused because this machine's clock is ${offsetMs === undefined ? 'off from' : describeOffset(offsetMs)} the time in their signatures (more than the allowed tolerance): ${lost}. Set up time sync on this machine (NTP, e.g. "sudo timedatectl set-ntp true"; a Raspberry Pi has no clock of its own and needs the network time).`;
    case 'signature':
      return `Webhook callbacks are refused because their signature does not match the API key in the plugin settings: ${lost}. Check that apiKey is the key of the Lock Access account these webhooks were registered with.`;
    case 'token':
      return `Webhook callbacks are refused because their x-lock-access-token header is missing or not the stored webhook token (registrations of an earlier install or another Homebridge?): ${lost}. Restart Homebridge to register the webhooks again; if this keeps up, unlink and link the account in the plugin settings.`;
  }
}

export class RejectionNotices {
  private readonly lastWarnedAt = new Map<RejectionCause, number>();
  private readonly counts = new Map<RejectionCause, number>();

  /** The warning to log for this refusal, or undefined (not a fixable cause, or warned within the hour). */
  note(reason: RejectionReason, now: number, offsetMs?: number): string | undefined {
    const cause = causeOf(reason);
    if (cause === undefined) return undefined;
    const count = (this.counts.get(cause) ?? 0) + 1;
    this.counts.set(cause, count);
    const last = this.lastWarnedAt.get(cause);
    // abs(): a clock set back by time sync must not silence the warning for the size of the jump.
    if (last !== undefined && Math.abs(now - last) < REJECTION_WARNING_INTERVAL_MS) return undefined;
    this.lastWarnedAt.set(cause, now);
    return warningText(cause, count, offsetMs);
  }
}

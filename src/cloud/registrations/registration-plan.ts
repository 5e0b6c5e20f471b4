// Pure planning of a reconcile: which registrations to (re-)send and which to delete, from what is
// wanted now and what the ledger says was done. No I/O, so every rule has a unit test.
import { callbackUrls } from '../../config.js';
import { DOORBELL_NOTIFICATION_TYPES, LOCK_NOTIFICATION_TYPES, USER_NOTIFICATION_TYPES } from '../../settings.js';
import { type HookKind, type LedgerEntry, scopeKey } from './registration-ledger.js';

/** A registration is sent again when its last confirmation is older than this. */
export const REREGISTER_AFTER_MS = 24 * 60 * 60 * 1000;

/** What the platform wants registered. Ids that appear twice are registered once. */
export interface WantedHooks {
  locks: string[];
  doorbells: string[];
  user: boolean;
}

export interface DesiredRegistration {
  key: string;
  kind: HookKind;
  id: string;
  clientId: string;
  url: string;
  types: readonly string[];
  tokenGeneration: number;
  tokenFingerprint: string;
}

export interface TokenIdentity {
  generation: number;
  fingerprint: string;
}

export const NOTIFICATION_TYPES: Record<HookKind, readonly string[]> = {
  lock: LOCK_NOTIFICATION_TYPES,
  doorbell: DOORBELL_NOTIFICATION_TYPES,
  user: USER_NOTIFICATION_TYPES,
};

export function desiredRegistrations(wanted: WantedHooks, context: { publicUrl: string; clientId: string; token: TokenIdentity }): DesiredRegistration[] {
  const urls = callbackUrls(context.publicUrl);
  const result = new Map<string, DesiredRegistration>();
  const add = (kind: HookKind, id: string, url: string) => {
    const key = scopeKey(kind, id);
    if (result.has(key)) return;
    result.set(key, {
      key,
      kind,
      id,
      clientId: context.clientId,
      url,
      types: NOTIFICATION_TYPES[kind],
      tokenGeneration: context.token.generation,
      tokenFingerprint: context.token.fingerprint,
    });
  };
  for (const id of wanted.locks) if (id !== '') add('lock', id, urls.lock(id));
  for (const id of wanted.doorbells) if (id !== '') add('doorbell', id, urls.doorbell(id));
  if (wanted.user) add('user', '', urls.user());
  return [...result.values()];
}

export type RegisterReason = 'new' | 'unconfirmed' | 'url changed' | 'types changed' | 'token changed' | 'client changed' | 'older than a day' | 'sent again';

export type PlannedAction =
  | { op: 'register'; desired: DesiredRegistration; reason: RegisterReason }
  | { op: 'delete'; entry: LedgerEntry; reason: 'not wanted' };

export interface ReconcilePlan {
  actions: PlannedAction[];
  /** Keys of registrations that are confirmed, current and fresh: nothing to send. */
  unchanged: string[];
}

function sameTypes(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const left = [...a].sort();
  const right = [...b].sort();
  return left.every((value, index) => value === right[index]);
}

/** Why a wanted registration must be sent, or undefined when the ledger shows it current. */
export function registerReason(desired: DesiredRegistration, entry: LedgerEntry | undefined, now: number, maxAgeMs = REREGISTER_AFTER_MS): RegisterReason | undefined {
  if (!entry) return 'new';
  if (entry.state !== 'registered' || entry.lastSuccessAt === undefined) return 'unconfirmed';
  if (entry.url !== desired.url) return 'url changed';
  if (!sameTypes(entry.types, desired.types)) return 'types changed';
  if (entry.tokenGeneration !== desired.tokenGeneration || entry.tokenFingerprint !== desired.tokenFingerprint) return 'token changed';
  if (entry.clientId !== desired.clientId) return 'client changed';
  // A confirmation "in the future" means the clock was set back: do not trust it.
  if (now - entry.lastSuccessAt >= maxAgeMs || entry.lastSuccessAt > now + 60 * 60 * 1000) return 'older than a day';
  return undefined;
}

/**
 * Registrations to send first (user first: it carries lifecycle notices), then deletions of every
 * ledger entry that is no longer wanted, whatever its state: a failed or unconfirmed registration
 * may still exist at the service. `sendAll`: every wanted registration is sent, current or not
 * (the service may have lost them).
 */
export function planReconcile(desired: readonly DesiredRegistration[], ledger: readonly LedgerEntry[], now: number, maxAgeMs = REREGISTER_AFTER_MS, sendAll = false): ReconcilePlan {
  const byKey = new Map(ledger.map((entry) => [scopeKey(entry.kind, entry.id), entry]));
  const wantedKeys = new Set<string>();
  const actions: PlannedAction[] = [];
  const unchanged: string[] = [];
  const ordered = [...desired].sort((a, b) => kindOrder(a.kind) - kindOrder(b.kind));
  for (const item of ordered) {
    wantedKeys.add(item.key);
    const reason = registerReason(item, byKey.get(item.key), now, maxAgeMs) ?? (sendAll ? 'sent again' : undefined);
    if (reason) actions.push({ op: 'register', desired: item, reason });
    else unchanged.push(item.key);
  }
  for (const [key, entry] of byKey) {
    if (!wantedKeys.has(key)) actions.push({ op: 'delete', entry, reason: 'not wanted' });
  }
  return { actions, unchanged };
}

function kindOrder(kind: HookKind): number {
  return kind === 'user' ? 0 : kind === 'lock' ? 1 : 2;
}

/** The earliest time a confirmed registration becomes due again (for the maintenance timer). */
export function nextRefreshAt(ledger: readonly LedgerEntry[], maxAgeMs = REREGISTER_AFTER_MS): number | undefined {
  let earliest: number | undefined;
  for (const entry of ledger) {
    if (entry.state !== 'registered' || entry.lastSuccessAt === undefined) continue;
    const due = entry.lastSuccessAt + maxAgeMs;
    if (earliest === undefined || due < earliest) earliest = due;
  }
  return earliest;
}

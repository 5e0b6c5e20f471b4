// Unlinking an account from the settings page when it owns a device another linked account also
// holds: the next owner (by the owner rule) registers the device first and gets its answer, and
// only then does the leaving account delete its registrations, so the service always has somewhere
// to deliver the device's events. The next owner's other registrations are sent as its ledger
// lists them, so nothing of its own changes; the running plugin finds the device registered.
import { ownerOf } from '../accounts/owner-rule.js';
import { accountStorage } from '../accounts/account-storage.js';
import { RegistrationLedger } from '../cloud/registrations/registration-ledger.js';
import type { WantedHooks } from '../cloud/registrations/registration-plan.js';
import { WebhookRegistrar } from '../cloud/registrations/registrations.js';
import { WebhookSecret } from '../cloud/registrations/webhook-secret.js';
import { readDeviceHoldings } from '../storage/device-owners.js';
import { TokenStore } from '../storage/token-file.js';
import type { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import { reasonMessage, reasonOf } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { accountPublicUrl, resolveAccountById } from './account-choice.js';
import type { CloudSession } from './cloud-session.js';

export interface HandedOver {
  /** `lock:ID` or `doorbell:ID`. */
  device: string;
  to: string;
  /** Why the new owner could not register it (the leaving account's registration is deleted all the same): words for the log, and a reason the page words. */
  error?: { text: string; reason: UiMessage };
}

type Listed = { id?: unknown; account?: unknown };
const entriesOf = (value: unknown): Listed[] => (Array.isArray(value) ? (value as Listed[]) : []);

/** The accounts the saved config names for a device with `"account"`, in config order. */
function namedOwners(saved: Record<string, unknown>, kind: string, id: string): string[] {
  const field = kind === 'lock' ? 'locks' : 'doorbells';
  const blocks = [saved, ...entriesOf(saved.accounts).map((entry) => entry as Record<string, unknown>)];
  return blocks.flatMap((block) => entriesOf(block[field]).filter((entry) => entry.id === id && typeof entry.account === 'string').map((entry) => entry.account as string));
}

async function linked(root: Storage, account: string): Promise<boolean> {
  const record = await new TokenStore(accountStorage(root, account)).read().catch(() => undefined);
  return record !== undefined && record.state !== 'unlinked';
}

/** What `account` has registered, by its ledger, plus `devices`: sending it changes nothing else of the account's. */
async function wantedWith(storage: Storage, devices: string[]): Promise<WantedHooks> {
  let damaged: string | undefined;
  const entries = (await RegistrationLedger.load(storage, (reason) => (damaged = reason))).all().filter((entry) => entry.state !== 'deleting');
  if (damaged !== undefined) throw new Error(`its list of registrations could not be read (${damaged})`);
  const ids = (kind: string) => [...new Set([...entries.filter((e) => e.kind === kind).map((e) => e.id), ...devices.filter((d) => d.startsWith(`${kind}:`)).map((d) => d.slice(kind.length + 1))])];
  return { locks: ids('lock'), doorbells: ids('doorbell'), user: entries.some((e) => e.kind === 'user') };
}

export async function handOverBeforeUnlink(leaving: string, root: Storage, saved: Record<string, unknown>, session: CloudSession): Promise<HandedOver[]> {
  const holdings = await readDeviceHoldings(root).catch(() => ({}));
  const byNext = new Map<string, string[]>();
  for (const [device, holding] of Object.entries(holdings)) {
    if (holding.owner !== leaving) continue;
    const [kind = '', ...rest] = device.split(':');
    const holders = holding.holders.filter((account) => account !== leaving);
    const live = new Set<string>();
    for (const account of holders) if (await linked(root, account)) live.add(account);
    const next = ownerOf({ holders, named: namedOwners(saved, kind, rest.join(':')), stored: undefined, linked: (account) => live.has(account) });
    if (next !== undefined) byNext.set(next, [...(byNext.get(next) ?? []), device]);
  }
  const handed: HandedOver[] = [];
  for (const [next, devices] of byNext) {
    try {
      const account = resolveAccountById(next, undefined, undefined, saved);
      const report = await session.withTokens(account, async (tokens) => {
        const storage = session.storageOf(account);
        const wanted = await wantedWith(storage, devices);
        const secret = await WebhookSecret.load(storage);
        secret.stop();
        const registrar = new WebhookRegistrar({
          client: await session.client(account, tokens),
          storage,
          clientId: account.clientId,
          publicUrl: () => accountPublicUrl(account.publicUrl, next),
          secret,
          log: session.log,
        });
        try {
          return await registrar.reconcile(wanted);
        } finally {
          registrar.stop();
        }
      });
      for (const device of devices) {
        const failed = report.failed.find((row) => row.key === device);
        const done = report.registered.includes(device) || report.unchanged.includes(device);
        const why = failed === undefined ? { text: 'not registered', reason: reasonMessage('reason.other') } : { text: failed.error, reason: failed.reason };
        handed.push(done ? { device, to: next } : { device, to: next, error: why });
      }
    } catch (error) {
      for (const device of devices) handed.push({ device, to: next, error: { text: errorText(error), reason: reasonOf(error) } });
    }
  }
  return handed;
}

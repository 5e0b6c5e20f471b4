// What the settings page only reads: the link state and the plugin's status snapshot (files, no
// network), the event log, a recording's playlist and the account's device list (one cloud call
// each). Nothing here changes the link or the plugin.
import { discoverDevices } from '../cloud/discovery.js';
import type { LinkState } from '../cloud/tokens/token-manager.js';
import { readDeviceHoldings, type DeviceHolding } from '../storage/device-owners.js';
import type { Storage } from '../storage.js';
import { TokenStore } from '../storage/token-file.js';
import { lookupVideo, type VideoEvent } from '../cloud/video.js';
import { reasonOf } from '../util/reason-messages.js';
import { processAlive } from '../util/process-alive.js';
import type { Account } from './account-input.js';
import { accountStorage } from '../accounts/account-storage.js';
import { isExtraAccountId } from './account-choice.js';
import type { CloudSession } from './cloud-session.js';
import type { EventLogEntry } from '../status/event-entry.js';
import { readEventLog } from '../status/event-log.js';
import { readStatus, type Status } from '../status/status.js';
import { checkSettingsMessage, messageOfSentence } from '../cloud/link-messages.js';
import { failureMessage } from './failure-message.js';
import type { UiMessage } from '../util/ui-message.js';
import { serverMessage } from './server-messages.js';
import { UiError } from './ui-error.js';

/** The plugin rewrites status.json at least this often while it runs; older means "not running". */
export const STATUS_STALE_MS = 10 * 60 * 1000;

export interface UiLinkStatus {
  /** 'checkSettings': the token service refused the client id or secret (the refresh token is kept). */
  state: LinkState | 'checkSettings';
  message: UiMessage;
}

export interface UiStatus {
  link: UiLinkStatus;
  /** The plugin's own snapshot; undefined until the plugin has run once. */
  plugin: Status | undefined;
  /** Whether the process that wrote the snapshot still runs. */
  pluginRunning: boolean;
  /** The link of each extra account asked about, from its own token file (`accounts/<id>/tokens.json`). */
  accounts: Record<string, UiLinkStatus>;
  /** Which accounts hold each shared device (`lock:ID`) and which owns it, as the plugin kept it. */
  holdings: Record<string, DeviceHolding>;
}

/** At most this many extra accounts are looked up per status request. */
const MAX_ACCOUNTS = 64;


export interface FoundDevices {
  locks: { id: string; name?: string }[];
  doorbells: { id: string; name?: string }[];
}

/** Whether the process that wrote `status` still runs (a snapshot without a pid trusts its age). */
export function isPluginRunning(status: Status, now: number): boolean {
  if (now - status.updatedAt > STATUS_STALE_MS && status.pid === undefined) return false;
  return status.pid === undefined || processAlive(status.pid);
}

/** The token file's sentence for its link state as a message; a plain one for a state without. */
function storedLinkMessage(record: { state: LinkState; message?: string | undefined }): UiMessage {
  if (record.message !== undefined) return messageOfSentence(record.message);
  return serverMessage(record.state === 'linked' ? 'server.linkState.linked' : 'server.linkState.relink');
}

/** An account's link as its token file says it. */
async function linkOf(storage: Storage): Promise<UiLinkStatus> {
  try {
    const record = await new TokenStore(storage).read();
    return record && record.state !== 'unlinked'
      ? record.settingsProblem !== undefined
        ? { state: 'checkSettings', message: checkSettingsMessage(record.settingsProblem) }
        : { state: record.state, message: storedLinkMessage(record) }
      : { state: 'unlinked', message: serverMessage(record ? 'server.linkState.unlinked' : 'server.linkState.neverLinked') };
  } catch (error) {
    return { state: 'reauthorizationNeeded', message: serverMessage('server.linkState.unreadable', { reason: reasonOf(error) }) };
  }
}

export class SettingsViews {
  constructor(
    private readonly session: CloudSession,
    private readonly now: () => number,
  ) {}

  /**
   * Link state from the token file (no network), and the plugin's snapshot; `accountIds` are the
   * extra accounts the page shows (saved or just added), each read from its own token file.
   */
  async status(accountIds: unknown = []): Promise<UiStatus> {
    const storage = this.session.storage;
    const link = await linkOf(storage);
    const ids = Array.isArray(accountIds) ? accountIds.filter(isExtraAccountId).slice(0, MAX_ACCOUNTS) : [];
    const accounts: Record<string, UiLinkStatus> = {};
    for (const id of new Set(ids)) accounts[id] = await linkOf(accountStorage(storage, id));
    const plugin = await readStatus(storage);
    const holdings = await readDeviceHoldings(storage).catch(() => ({}));
    return { link, plugin, pluginRunning: plugin !== undefined && isPluginRunning(plugin, this.now()), accounts, holdings };
  }

  /** Newest first. */
  events(): Promise<EventLogEntry[]> {
    return readEventLog(this.session.storage);
  }

  /** The recording's playlist address for the page's player. */
  video(account: Account, doorbellId: string, dvrId: string): Promise<VideoEvent> {
    return this.session.withTokens(account, async (tokens) => {
      try {
        return await lookupVideo(await this.session.client(account, tokens), doorbellId, dvrId);
      } catch (error) {
        throw new UiError(failureMessage(this.session.log, 'server.video.notFound', error));
      }
    });
  }

  /** Asks the service for the account's locks and doorbells. */
  discover(account: Account): Promise<FoundDevices> {
    return this.session.withTokens(account, async (tokens) => {
      try {
        const found = await discoverDevices(await this.session.client(account, tokens));
        const plain = (list: { id: string; name: string | undefined }[]) => list.map((d) => (d.name === undefined ? { id: d.id } : { id: d.id, name: d.name }));
        return { locks: plain(found.locks), doorbells: plain(found.doorbells) };
      } catch (error) {
        throw new UiError(failureMessage(this.session.log, 'server.devices.notListed', error));
      }
    });
  }
}

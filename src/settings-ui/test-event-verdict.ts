// What a test event proved, judged from the status file the plugin writes: the settings server
// asked the service for a lock's status, and the service answers with a signed `status` callback
// to the public address. Pure: the status, the lock, when the request was made and the time now.
import type { Status } from '../status/status.js';
import { withoutCredentials } from '../util/redact-url.js';
import { messageCatalog, type UiMessage } from '../util/ui-message.js';
import { MAIN_ACCOUNT_ID } from '../config/fields.js';
import { accountPublicUrl } from './account-choice.js';

/** How long a test event waits for its callback before it says nothing arrived. */
export const TEST_EVENT_TIMEOUT_MS = 30_000;

export const TEST_EVENT_MESSAGES = {
  'testEvent.passed': 'The test event came back through {url} in {seconds} s with a good signature: the whole way from the service to HomeKit works.',
  'testEvent.refused.signature': 'A callback arrived, but its signature did not match: the API key in the plugin settings differs from the one the service signs with. Copy the API key again and restart Homebridge.',
  'testEvent.refused.clock': 'A callback arrived, but its time was too far off: this machine\'s clock (or the service\'s) is wrong. Turn on time sync (NTP) on the Homebridge machine.',
  'testEvent.refused.clockSeconds': {
    one: 'A callback arrived, but its time was {count} second off: this machine\'s clock (or the service\'s) is wrong. Turn on time sync (NTP) on the Homebridge machine.',
    other: 'A callback arrived, but its time was {count} seconds off: this machine\'s clock (or the service\'s) is wrong. Turn on time sync (NTP) on the Homebridge machine.',
  },
  'testEvent.refused.clockMinutes': {
    one: 'A callback arrived, but its time was {count} minute off: this machine\'s clock (or the service\'s) is wrong. Turn on time sync (NTP) on the Homebridge machine.',
    other: 'A callback arrived, but its time was {count} minutes off: this machine\'s clock (or the service\'s) is wrong. Turn on time sync (NTP) on the Homebridge machine.',
  },
  'testEvent.refused.token': 'A callback arrived, but the webhook token did not match: an old registration is in use. Restart Homebridge so the webhooks are registered again.',
  'testEvent.refused.other': 'A callback arrived, but the listener refused it ({reason}). Download the diagnostics and attach them to a bug report.',
  'testEvent.otherPath': 'A request arrived at {path}, not at {expected}: your proxy or tunnel changes the path. Forward the path as it is (keep {prefix}).',
  'testEvent.waiting': 'Waiting for the service to call back…',
  'testEvent.nothing': {
    one: 'Nothing arrived within {count} second: the service cannot reach {url}. Check that your tunnel or proxy is running and forwards to this plugin\'s listener.',
    other: 'Nothing arrived within {count} seconds: the service cannot reach {url}. Check that your tunnel or proxy is running and forwards to this plugin\'s listener.',
  },
  'testEvent.nothingAt': {
    one: 'Nothing arrived within {count} second: the service cannot reach {url}. Check that your tunnel or proxy is running and forwards to this plugin\'s listener ({listener}).',
    other: 'Nothing arrived within {count} seconds: the service cannot reach {url}. Check that your tunnel or proxy is running and forwards to this plugin\'s listener ({listener}).',
  },
  'testEvent.tunnelDown': 'The ngrok tunnel is not connected, so the service cannot reach the plugin: {reason}',
  'testEvent.tunnelConnecting': 'The ngrok tunnel is not connected, so the service cannot reach the plugin: it is still connecting.',
  'testEvent.noAddress': 'Enter the public webhook address (or set up the ngrok tunnel) first, save, and restart Homebridge.',
} as const;

const say = messageCatalog(TEST_EVENT_MESSAGES);

export type TestEventVerdict =
  | { state: 'waiting'; message: UiMessage }
  | { state: 'passed'; message: UiMessage; tookMs: number }
  | { state: 'refused' | 'otherPath' | 'nothing'; message: UiMessage };

export interface TestEventQuestion {
  lockId: string;
  /** When the settings server asked the service (epoch ms). */
  startedAt: number;
  now: number;
  publicUrl: string;
  /** The account whose path the callback comes to (`/a/<id>/lock/…`); the main account when absent. */
  accountId?: string;
}

/** What a refusal reason means for the user, in one sentence they can act on. */
function refusal(reason: string, clockOffsetMs: number | undefined): UiMessage {
  switch (reason) {
    case 'bad-signature':
    case 'missing-signature':
      return say('testEvent.refused.signature');
    case 'stale-timestamp':
    case 'future-timestamp': {
      if (clockOffsetMs === undefined) return say('testEvent.refused.clock');
      const s = Math.abs(clockOffsetMs) / 1000;
      return s >= 90 ? say('testEvent.refused.clockMinutes', { count: Math.round(s / 60) }) : say('testEvent.refused.clockSeconds', { count: Math.round(s) });
    }
    case 'bad-token':
    case 'missing-token':
      return say('testEvent.refused.token');
    default:
      return say('testEvent.refused.other', { reason });
  }
}

/**
 * Where the service calls the plugin for this test: the address the running plugin registered (the
 * ngrok tunnel's, or webhook.publicUrl as it started with), from its status file; before the plugin
 * has said, the address on the page. Words for the user when there is none.
 */
export function testEventAddress(status: Status | undefined, pagePublicUrl: string | undefined): { url: string } | { problem: UiMessage } {
  const address = status?.publicAddress;
  if (address?.url !== undefined) return { url: address.url };
  if (address?.via === 'ngrok') {
    const why = address.tunnel?.message;
    return { problem: why === undefined ? say('testEvent.tunnelConnecting') : say('testEvent.tunnelDown', { reason: why }) };
  }
  if (pagePublicUrl !== undefined) return { url: pagePublicUrl };
  return { problem: say('testEvent.noAddress') };
}

/** Reads the outcome of a test event for `lockId` from the plugin's status file. */
export function judgeTestEvent(status: Status | undefined, question: TestEventQuestion): TestEventVerdict {
  const { lockId, startedAt, now } = question;
  const timeoutMs = TEST_EVENT_TIMEOUT_MS;
  // The account's own path: the main account's callbacks come to the address, another's to `/a/<id>` under it.
  const accountUrl = accountPublicUrl(question.publicUrl, question.accountId ?? MAIN_ACCOUNT_ID) ?? question.publicUrl;
  const where = withoutCredentials(accountUrl);
  const receiver = status?.receiver;
  const arrived = receiver?.lastCallbacks[`lock:${lockId}`];
  if (arrived !== undefined && arrived.at >= startedAt) {
    const tookMs = Math.max(0, arrived.at - startedAt);
    // Tenths of a second, never "0 s" for a callback that came within 50 ms.
    return { state: 'passed', tookMs, message: say('testEvent.passed', { url: where, seconds: Math.max(0.1, Math.round(tookMs / 100) / 10) }) };
  }
  const refused = receiver?.lastRejection;
  if (refused !== undefined && refused.at >= startedAt && (refused.device === undefined || refused.device === `lock:${lockId}`)) {
    return { state: 'refused', message: refusal(refused.reason, refused.clockOffsetMs) };
  }
  const stray = receiver?.lastUnknownPath;
  if (stray !== undefined && stray.at >= startedAt) {
    const prefix = new URL(question.publicUrl).pathname.replace(/\/+$/, '');
    const expected = `${new URL(accountUrl).pathname.replace(/\/+$/, '')}/lock/${lockId}`;
    return { state: 'otherPath', message: say('testEvent.otherPath', { path: stray.path, expected, prefix: prefix || '/' }) };
  }
  if (now - startedAt < timeoutMs) return { state: 'waiting', message: say('testEvent.waiting') };
  const count = Math.round(timeoutMs / 1000);
  const listener = status?.receiver.listenAddress;
  return { state: 'nothing', message: listener ? say('testEvent.nothingAt', { count, url: where, listener }) : say('testEvent.nothing', { count, url: where }) };
}

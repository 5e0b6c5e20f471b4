// What a test event proved, judged from the status file the plugin writes: the settings server
// asked the service for a lock's status, and the service answers with a signed `status` callback
// to the public address. Pure: the status, the lock, when the request was made and the time now.
import type { Status } from '../status/status.js';
import { withoutCredentials } from '../util/redact-url.js';

/** How long a test event waits for its callback before it says nothing arrived. */
export const TEST_EVENT_TIMEOUT_MS = 30_000;

export type TestEventVerdict =
  | { state: 'waiting'; message: string }
  | { state: 'passed'; message: string; tookMs: number }
  | { state: 'refused' | 'otherPath' | 'nothing'; message: string };

export interface TestEventQuestion {
  lockId: string;
  /** When the settings server asked the service (epoch ms). */
  startedAt: number;
  now: number;
  publicUrl: string;
  /** How long to wait before "nothing arrived"; TEST_EVENT_TIMEOUT_MS unless the settings server was given less. */
  timeoutMs?: number;
}

function seconds(ms: number): string {
  const s = Math.abs(ms) / 1000;
  return s >= 90 ? `${Math.round(s / 60)} minutes` : `${Math.round(s)} seconds`;
}

/** What a refusal reason means for the user, in one sentence they can act on. */
function refusalWords(reason: string, clockOffsetMs: number | undefined): string {
  switch (reason) {
    case 'bad-signature':
    case 'missing-signature':
      return 'its signature did not match: the API key in the plugin settings differs from the one the service signs with. Copy the API key again and restart Homebridge.';
    case 'stale-timestamp':
    case 'future-timestamp':
      return `its time was ${clockOffsetMs === undefined ? 'too far' : seconds(clockOffsetMs)} off: this machine's clock (or the service's) is wrong. Turn on time sync (NTP) on the Homebridge machine.`;
    case 'bad-token':
    case 'missing-token':
      return 'the webhook token did not match: an old registration is in use. Restart Homebridge so the webhooks are registered again.';
    default:
      return `the listener refused it (${reason}). Download the diagnostics and attach them to a bug report.`;
  }
}

/**
 * Where the service calls the plugin for this test: the address the running plugin registered (the
 * ngrok tunnel's, or webhook.publicUrl as it started with), from its status file; before the plugin
 * has said, the address on the page. Words for the user when there is none.
 */
export function testEventAddress(status: Status | undefined, pagePublicUrl: string | undefined): { url: string } | { problem: string } {
  const address = status?.publicAddress;
  if (address?.url !== undefined) return { url: address.url };
  if (address?.via === 'ngrok') {
    const why = address.tunnel?.message ?? 'it is still connecting.';
    return { problem: `The ngrok tunnel is not connected, so the service cannot reach the plugin: ${why}` };
  }
  if (pagePublicUrl !== undefined) return { url: pagePublicUrl };
  return { problem: 'Enter the public webhook address (or set up the ngrok tunnel) first, save, and restart Homebridge.' };
}

/** Reads the outcome of a test event for `lockId` from the plugin's status file. */
export function judgeTestEvent(status: Status | undefined, question: TestEventQuestion): TestEventVerdict {
  const { lockId, startedAt, now } = question;
  const timeoutMs = question.timeoutMs ?? TEST_EVENT_TIMEOUT_MS;
  const where = withoutCredentials(question.publicUrl);
  const receiver = status?.receiver;
  const arrived = receiver?.lastCallbacks[`lock:${lockId}`];
  if (arrived !== undefined && arrived.at >= startedAt) {
    const tookMs = Math.max(0, arrived.at - startedAt);
    return {
      state: 'passed',
      tookMs,
      message: `The test event came back through ${where} in ${(tookMs / 1000).toFixed(1)} s with a good signature: the whole way from the service to HomeKit works.`,
    };
  }
  const refused = receiver?.lastRejection;
  if (refused !== undefined && refused.at >= startedAt && (refused.device === undefined || refused.device === `lock:${lockId}`)) {
    return { state: 'refused', message: `A callback arrived, but ${refusalWords(refused.reason, refused.clockOffsetMs)}` };
  }
  const stray = receiver?.lastUnknownPath;
  if (stray !== undefined && stray.at >= startedAt) {
    const expected = `${new URL(question.publicUrl).pathname.replace(/\/+$/, '')}/lock/${lockId}`;
    return {
      state: 'otherPath',
      message: `A request arrived at ${stray.path}, not at ${expected}: your proxy or tunnel changes the path. Forward the path as it is (keep ${new URL(question.publicUrl).pathname.replace(/\/+$/, '') || '/'}).`,
    };
  }
  if (now - startedAt < timeoutMs) return { state: 'waiting', message: 'Waiting for the service to call back…' };
  return {
    state: 'nothing',
    message: `Nothing arrived within ${seconds(timeoutMs)}: the service cannot reach ${where}. Check that your tunnel or proxy is running and forwards to this plugin's listener${status?.receiver.listenAddress ? ` (${status.receiver.listenAddress})` : ''}.`,
  };
}

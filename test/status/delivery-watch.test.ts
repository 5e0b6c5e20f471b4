// The delivery watch's whole schedule on fake timers: a probe after a quiet period, the 30 s wait,
// "not arriving" with registrations sent again, the self-check and one warning, the back-off, and
// "arriving" again on any verified callback.
import { uiMessage, type UiMessage } from '../../src/util/ui-message.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { tunnelMessage } from '../../src/cloud/tunnel/tunnel-messages.js';
import { CHECKS_WAIT_MS } from '../../src/status/delivery-checks.js';
import { DeliveryWatch, PROBE_WAIT_MS, type DeliveryRecord, type DeliveryState } from '../../src/status/delivery-watch.js';
import { systemClock } from '../../src/util/clock.js';

const MIN = 60_000;
const PERIOD = 360 * MIN;

interface Setup {
  locks?: string[];
  periodMs?: number;
  /** What the service does with a status request: 'callback' sends one back at once, 'nothing' drops it, or it rejects. */
  service?: (lockId: string) => 'callback' | 'nothing' | Error;
  registerAgain?: () => Promise<UiMessage>;
  /** The status request itself, when the test scripts the service's timing. */
  askStatus?: (lockId: string, watch: DeliveryWatch) => Promise<void>;
}

function setup(options: Setup = {}) {
  const asked: { lockId: string; at: number }[] = [];
  const states: DeliveryState[] = [];
  const records: DeliveryRecord[] = [];
  const lines: { level: string; message: string }[] = [];
  let registered = 0;
  let selfChecks = 0;
  const log = {
    info: (m: string) => lines.push({ level: 'info', message: m }),
    warn: (m: string) => lines.push({ level: 'warn', message: m }),
    error: (m: string) => lines.push({ level: 'error', message: m }),
    debug: (m: string) => lines.push({ level: 'debug', message: m }),
  };
  const watch: DeliveryWatch = new DeliveryWatch({
    periodMs: options.periodMs ?? PERIOD,
    clock: { ...systemClock, now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms) },
    log,
    locks: () => options.locks ?? ['LOCK-A', 'LOCK-B'],
    nameOf: (id) => (id === 'LOCK-A' ? 'Front Door' : id === 'LOCK-B' ? 'Back Door' : id),
    askStatus: (lockId) => {
      asked.push({ lockId, at: Date.now() });
      if (options.askStatus) return options.askStatus(lockId, watch);
      const answer = options.service?.(lockId) ?? 'nothing';
      if (answer instanceof Error) return Promise.reject(answer);
      // The service's callback can come in before its answer to the request.
      if (answer === 'callback') watch.heard(`a status callback for ${lockId}`);
      return Promise.resolve();
    },
    registerAgain: () => {
      registered += 1;
      return options.registerAgain?.() ?? Promise.resolve(uiMessage('resend.confirmed', { confirmed: 3 }, 'every webhook registration was sent again (3 confirmed)'));
    },
    selfCheck: () => {
      selfChecks += 1;
      return Promise.resolve(uiMessage('deliveryCheck.selfCheck.passes', { result: uiMessage('selfCheck.ok', { url: 'https://x/health' }, 'ok') }, 'the public address self-check passes'));
    },
    publish: (record) => records.push(record),
  });
  watch.onChange((state) => states.push(state));
  return { watch, asked, states, records, lines, registered: () => registered, selfChecks: () => selfChecks, warnings: () => lines.filter((l) => l.level === 'warn'), infos: () => lines.filter((l) => l.level === 'info') };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-24T10:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('delivery watch: whenever no verified callback has arrived for the period, it probes', () => {
  it('asks nothing while callbacks keep coming; each verified callback starts the quiet time again', async () => {
    const t = setup();
    t.watch.start();
    expect(t.watch.state).toBe('unknown');
    await vi.advanceTimersByTimeAsync(PERIOD - MIN);
    t.watch.heard('a lock callback');
    expect(t.watch.state).toBe('arriving');
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    expect(t.asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.asked).toHaveLength(1);
    t.watch.stop();
  });

  it('arrived: the status callback makes delivery "arriving" and nothing is logged; the next probe asks the next lock', async () => {
    const t = setup({ service: () => 'callback' });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.asked.map((a) => a.lockId)).toEqual(['LOCK-A']);
    expect(t.watch.state).toBe('arriving');
    expect(t.lines.filter((l) => l.level !== 'debug')).toEqual([]);
    expect(t.registered()).toBe(0);
    expect(t.records.at(-1)?.lastCheck).toMatchObject({ how: 'probe', lockId: 'LOCK-A', outcome: 'arrived' });
    await vi.advanceTimersByTimeAsync(PERIOD);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.asked.map((a) => a.lockId)).toEqual(['LOCK-A', 'LOCK-B', 'LOCK-A']);
    expect(t.asked.map((a) => a.at - Date.parse('2026-11-24T10:00:00Z'))).toEqual([PERIOD, 2 * PERIOD, 3 * PERIOD]);
    t.watch.stop();
  });

  it('nothing within 30 s: "not arriving" at once, every registration sent again, the self-check run, and one warning that says since when, what was checked and what to do', async () => {
    const t = setup();
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(PROBE_WAIT_MS - 1);
    expect(t.watch.state).toBe('unknown');
    expect(t.registered()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.watch.state).toBe('notArriving');
    expect(t.states).toEqual(['notArriving']);
    expect(t.registered()).toBe(1);
    expect(t.selfChecks()).toBe(1);
    expect(t.warnings()).toHaveLength(1);
    const warning = t.warnings()[0]?.message ?? '';
    expect(warning).toMatch(/^Events from Lock Access are not arriving: nothing has arrived since the plugin started \(.+\), and a status request for Front Door brought no callback within 30 s\./);
    expect(warning).toContain('Checked: every webhook registration was sent again (3 confirmed); the public address self-check passes.');
    expect(warning).toMatch(/Send a test event from the plugin settings/);
    expect(warning).toMatch(/docs\/troubleshooting\.md/);
    expect(warning).toMatch(/The next check is in 1 minute\./);
    const record = t.records.at(-1);
    expect(record).toMatchObject({ state: 'notArriving', since: Date.now(), checked: { registrations: { code: 'resend.confirmed', params: { confirmed: 3 } }, selfCheck: { code: 'deliveryCheck.selfCheck.passes' } }, nextCheckAt: Date.now() + MIN });
    t.watch.stop();
  });

  it('probes again on the back-off (1, 2, 5, 10, 30 minutes, then each period), sending the registrations again each time and warning only once', async () => {
    const t = setup({ locks: ['LOCK-A'] });
    t.watch.start();
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(PERIOD + PROBE_WAIT_MS);
    expect(t.watch.state).toBe('notArriving');
    let found = Date.now();
    const gaps: number[] = [];
    for (let i = 0; i < 7; i++) {
      const before = t.asked.length;
      while (t.asked.length === before) await vi.advanceTimersByTimeAsync(1_000);
      gaps.push(Date.now() - found);
      await vi.advanceTimersByTimeAsync(PROBE_WAIT_MS);
      found = Date.now();
    }
    expect(gaps).toEqual([1, 2, 5, 10, 30, 360, 360].map((m) => m * MIN));
    expect(t.asked[0]?.at).toBe(start + PERIOD);
    expect(t.registered()).toBe(8);
    expect(t.selfChecks()).toBe(8);
    expect(t.warnings()).toHaveLength(1);
    expect(t.states).toEqual(['notArriving']);
    t.watch.stop();
  });

  it('never waits longer than the period: with 1 minute, the probe repeats every minute while nothing arrives', async () => {
    const t = setup({ locks: ['LOCK-A'], periodMs: MIN });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(MIN + PROBE_WAIT_MS);
    expect(t.watch.state).toBe('notArriving');
    const at = t.asked.length;
    await vi.advanceTimersByTimeAsync(3 * (MIN + PROBE_WAIT_MS));
    expect(t.asked.length - at).toBe(3);
    t.watch.stop();
  });

  it('any verified callback makes delivery "arriving" again at once, with one info line, and the period starts over', async () => {
    const t = setup({ locks: ['LOCK-A'] });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD + PROBE_WAIT_MS);
    expect(t.watch.state).toBe('notArriving');
    await vi.advanceTimersByTimeAsync(20_000);
    t.watch.heard('a doorbell callback for BELL-1');
    expect(t.watch.state).toBe('arriving');
    expect(t.states).toEqual(['notArriving', 'arriving']);
    expect(t.infos()).toHaveLength(1);
    expect(t.infos()[0]?.message).toMatch(/^Events from Lock Access arrive again \(a doorbell callback for BELL-1\); they had not been arriving since /);
    t.watch.heard('another');
    expect(t.infos()).toHaveLength(1);
    const asked = t.asked.length;
    // The back-off's 1 minute is over: no probe until a whole quiet period has passed.
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    expect(t.asked.length).toBe(asked);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.asked.length).toBe(asked + 1);
    t.watch.stop();
  });

  it('the warning waits at most 15 s for the registrations; the sensor state does not wait at all', async () => {
    const t = setup({ locks: ['LOCK-A'], registerAgain: () => new Promise<UiMessage>(() => undefined) });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD + PROBE_WAIT_MS);
    expect(t.watch.state).toBe('notArriving');
    expect(t.warnings()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(CHECKS_WAIT_MS);
    expect(t.warnings()).toHaveLength(1);
    expect(t.warnings()[0]?.message).toContain('every webhook registration is being sent again (the log says how it went)');
    t.watch.stop();
  });

  it('a lock the service cannot ask (bridge offline) is skipped for the next; when none can be asked, nothing is concluded and it is tried again on the back-off', async () => {
    const t = setup({ service: (id) => (id === 'LOCK-A' ? new Error('the lock\'s bridge is offline') : 'callback') });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.asked.map((a) => a.lockId)).toEqual(['LOCK-A', 'LOCK-B']);
    expect(t.watch.state).toBe('arriving');

    const none = setup({ service: () => Object.assign(new Error('the lock\'s Wi-Fi bridge is offline (422)'), { name: 'BridgeError', problem: 'offline', status: 422 }) });
    none.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(none.watch.state).toBe('unknown');
    expect(none.registered()).toBe(0);
    // The page gets a reason code for the failed request, never the error's English sentence.
    expect(none.records.at(-1)?.lastCheck).toMatchObject({ outcome: 'notAsked', message: { code: 'deliveryCheck.notAsked', params: { name: 'Front Door', reason: { code: 'reason.bridgeOffline', params: {} } } } });
    expect(JSON.stringify(none.records.at(-1)?.lastCheck?.message.params)).not.toContain('(422)');
    expect(none.lines.find((l) => l.level === 'debug' && l.message.includes('no lock could be asked'))?.message).toMatch(/Wi-Fi bridge is offline \(422\)/);
    expect(none.lines.filter((l) => l.level === 'warn')).toEqual([]);
    const asked = none.asked.length;
    await vi.advanceTimersByTimeAsync(MIN);
    expect(none.asked.length).toBe(asked + 2);
    t.watch.stop();
    none.watch.stop();
  });

  it('a doorbell-only account (no lock to ask): the registrations are sent again and the self-check runs on the same schedule, and nothing is concluded', async () => {
    const t = setup({ locks: [] });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    expect(t.registered()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.asked).toEqual([]);
    expect(t.registered()).toBe(1);
    expect(t.selfChecks()).toBe(1);
    expect(t.watch.state).toBe('unknown');
    expect(t.records.at(-1)?.lastCheck).toMatchObject({ how: 'registrations', outcome: 'checked' });
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.registered()).toBe(2);
    expect(t.lines.filter((l) => l.level === 'warn')).toEqual([]);
    t.watch.stop();
  });

  it('stops: no probe after stop()', async () => {
    const t = setup();
    t.watch.start();
    t.watch.stop();
    await vi.advanceTimersByTimeAsync(3 * PERIOD);
    expect(t.asked).toEqual([]);
  });

  it('the 30 s wait starts when the status request is answered: a bridge that answers after 29 s, then calls back 20 s later, is no "not arriving"', async () => {
    const t = setup({
      askStatus: async (lockId, watch) => {
        await new Promise((resolve) => setTimeout(resolve, 29_000));
        setTimeout(() => {
          watch.heard(`a status callback for ${lockId}`);
        }, 20_000);
      },
    });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(t.asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(29_000 + 20_000);
    expect(t.watch.state).toBe('arriving');
    expect(t.states).toEqual(['arriving']);
    expect(t.registered()).toBe(0);
    expect(t.warnings()).toEqual([]);
    expect(t.records.at(-1)?.lastCheck).toMatchObject({ how: 'probe', lockId: 'LOCK-A', outcome: 'arrived' });
    t.watch.stop();
  });

  it('a slow answer does not stretch the wait without end: nothing 30 s after the answer is "not arriving"', async () => {
    const t = setup({
      askStatus: async () => {
        await new Promise((resolve) => setTimeout(resolve, 29_000));
      },
    });
    t.watch.start();
    await vi.advanceTimersByTimeAsync(PERIOD + 29_000 + PROBE_WAIT_MS - 1);
    expect(t.watch.state).toBe('unknown');
    await vi.advanceTimersByTimeAsync(1);
    expect(t.watch.state).toBe('notArriving');
    t.watch.stop();
  });

  it('a way in that cannot be built is "not arriving" at once, without a probe; the first callback through it is "arriving" again', async () => {
    const t = setup();
    t.watch.start();
    t.watch.cannotArrive(tunnelMessage('tunnel.failed.network'));
    expect(t.watch.state).toBe('notArriving');
    expect(t.asked).toEqual([]);
    expect(t.records.at(-1)).toMatchObject({ state: 'notArriving', lastCheck: { how: 'wayIn', outcome: 'nothing', message: { code: 'deliveryCheck.cannotArrive', params: { reason: { code: 'tunnel.failed.network' } }, text: expect.stringMatching(/^Events cannot arrive: The ngrok tunnel could not connect: ngrok cannot be reached/) as unknown } } });
    await vi.advanceTimersByTimeAsync(MIN);
    t.watch.heard('a status callback for LOCK-A');
    expect(t.watch.state).toBe('arriving');
    expect(t.infos()).toHaveLength(1);
    t.watch.stop();
  });
});

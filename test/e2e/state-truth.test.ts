// State that stays true, as Apple Home sees it: the built plugin in a real Homebridge
// against the simulator's scripted patterns, read through a real paired HomeKit controller.
// Design sections 6 (dedupe, ordering) and 7 (offline, nothing unknown shown as known).
import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { E2eSession, fireAccepted } from '../harness/e2e-session.js';
import { characteristicId, shortType, type HapAccessoryInfo, type Subscription } from '../harness/hap.js';
import { freePort } from '../harness/homebridge.js';
import { startSimulator, type FireOptions, type Simulator } from '../sim/index.js';
import { manualOperation } from '../sim/payloads.js';
import { simPlatformConfig } from '../sim/plugin-config.js';
import { ScenarioRun } from '../sim/scenario.js';
import { batteryFlapping, bridgeFlapping, lockClockJump, lockClockReset, type StateScenario } from '../sim/state-scenarios.js';

const { Service: S, Characteristic: C } = hap;
const NO_RESPONSE = -70402;

let sim: Simulator;
const session = new E2eSession();
const { eventually, paired } = session;

beforeAll(async () => {
  sim = await startSimulator({
    locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true, keypad: true, lockState: 'locked' }],
    doorbells: [{ id: 'BELL-1', name: 'Front Doorbell' }],
  });
  const listenPort = await freePort();
  await session.start({
    platforms: [simPlatformConfig(sim, listenPort, {
      locks: [{ id: 'LOCK-1', name: 'Front Door', doorSensor: true }],
      doorbells: [{ id: 'BELL-1', name: 'Front Doorbell', motionTimeoutSeconds: 1 }],
      discoverDevices: false,
      userWebhook: false,
      // nothing but the events of each test tells the plugin anything
      refreshStateOnStart: false,
    })],
    // Callbacks flow once the webhooks are registered.
    registrations: { sim, atLeast: 2 },
  });
  await session.pair(3, 'the bridge and two accessories');
}, 90_000);

afterAll(async () => {
  await session.close();
  await sim.close();
});

const front = (): Promise<HapAccessoryInfo> => eventually(() => paired().accessory('Front Door'), 'the Front Door');
const lockCurrent = async () => characteristicId(await front(), S.LockMechanism.UUID, C.LockCurrentState.UUID);

async function expectValue(id: string, expected: unknown, what: string): Promise<void> {
  await eventually(async () => ((await paired().readOne(id)).value === expected ? true : undefined), `${what} = ${String(expected)}`);
}

const fire = (name: string, options: FireOptions = {}) => fireAccepted(sim, name, options);

/** Fires a scenario's steps one after another; `after` runs after each step. */
async function play(scenario: StateScenario, after?: (index: number) => Promise<void>): Promise<void> {
  const run = new ScenarioRun(scenario.steps, (event, options) => sim.fire(event, options), sim.clock);
  for (let report = await run.next(); report; report = await run.next()) {
    expect(report.results.every((r) => r.status === 200)).toBe(true);
    await after?.(report.index);
  }
}

async function readableIds(): Promise<string[]> {
  return (await front()).services.flatMap((s) => s.characteristics.filter((c) => c.perms.includes('pr')).map((c) => `${c.aid}.${c.iid}`));
}

async function readsAre(outcome: 'failing' | 'working'): Promise<void> {
  const ids = await readableIds();
  await eventually(async () => {
    const results = [...(await paired().read(ids)).values()];
    return results.every((r) => (outcome === 'failing' ? r.status === NO_RESPONSE : r.status === undefined)) ? true : undefined;
  }, `every read of the Front Door ${outcome}`);
}

/** Lines of this Homebridge's log matching `pattern` so far. */
const logCount = (pattern: RegExp): number => session.hb?.logs.filter((line) => pattern.test(line)).length ?? 0;

describe('nothing unknown is shown as known', () => {
  it('a configured door sensor is not active before any door event; the first real position makes it active and init/unknown change nothing', async () => {
    const lock = await front();
    const active = characteristicId(lock, S.ContactSensor.UUID, C.StatusActive.UUID);
    const contact = characteristicId(lock, S.ContactSensor.UUID, C.ContactSensorState.UUID);
    // HAP sends booleans as 0/1 on the wire
    expect(Number((await paired().readOne(active)).value)).toBe(0);
    await fire('door-closed', { lockId: 'LOCK-1' });
    await eventually(async () => (Number((await paired().readOne(active)).value) === 1 ? true : undefined), 'StatusActive after the first door event');
    expect((await paired().readOne(contact)).value).toBe(0);
    await fire('door-init', { lockId: 'LOCK-1' });
    await fire('door-unknown', { lockId: 'LOCK-1' });
    await session.hb?.waitForLog(/Front Door: Door state unknown/);
    expect(Number((await paired().readOne(active)).value)).toBe(1);
    expect((await paired().readOne(contact)).value).toBe(0);
  });

  it('the lock battery shows no level until the lock reports one', async () => {
    const battery = (lock: HapAccessoryInfo) => lock.services.find((s) => s.type === shortType(S.Battery.UUID) && s.characteristics.some((c) => c.value === 'Front Door Battery'));
    const levelOf = (lock: HapAccessoryInfo) => battery(lock)?.characteristics.find((c) => c.type === shortType(C.BatteryLevel.UUID));
    expect(battery(await front())).toBeDefined();
    expect(levelOf(await front())).toBeUndefined();
    await fire('lock-battery', { lockId: 'LOCK-1', level: '1week' });
    const level = await eventually(async () => levelOf(await front()), 'a BatteryLevel on the lock battery');
    await expectValue(`${level.aid}.${level.iid}`, 10, 'BatteryLevel');
  });
});

describe('state reports are applied every time they arrive', () => {
  it('a bridge that goes offline, online, offline, online (the same bodies each time) ends reachable', async () => {
    await play(bridgeFlapping({ lockId: 'LOCK-1' }));
    await session.hb?.waitForLog(/Front Door: the lock's Wi-Fi bridge is back online/);
    await readsAre('working');
    // and once more, ending offline: the last report wins
    await fire('bridge-offline', { lockId: 'LOCK-1' });
    await readsAre('failing');
    await fire('bridge-online', { lockId: 'LOCK-1' });
    await readsAre('working');
  });

  it('a battery that goes low, fine, low (the same bodies each time) ends low', async () => {
    const lock = await front();
    const level = characteristicId(lock, S.Battery.UUID, C.BatteryLevel.UUID, 'Front Door Battery');
    const low = characteristicId(lock, S.Battery.UUID, C.StatusLowBattery.UUID, 'Front Door Battery');
    await play(batteryFlapping({ lockId: 'LOCK-1' }), async (index) => {
      await expectValue(level, index === 1 ? 100 : 5, `BatteryLevel after step ${index + 1}`);
    });
    await expectValue(low, 1, 'StatusLowBattery at the end');
  });
});

describe('No Response ends when the bridge is proven reachable', () => {
  it('a status callback ends it', async () => {
    await fire('bridge-offline', { lockId: 'LOCK-1' });
    await readsAre('failing');
    await fire('status', { lockId: 'LOCK-1' });
    await readsAre('working');
    await session.hb?.waitForLog(/Front Door: the lock's Wi-Fi bridge answered a status request, so it is back online/);
  });

  it('a successful remote command ends it', async () => {
    await fire('bridge-offline', { lockId: 'LOCK-1' });
    await readsAre('failing');
    // The bridge is back, but the service has not announced it (online comes when seen, not always).
    sim.setBridge('LOCK-1', 'online');
    const target = characteristicId(await front(), S.LockMechanism.UUID, C.LockTargetState.UUID);
    expect(await paired().write(target, 0)).toBe(0);
    await readsAre('working');
    await expectValue(await lockCurrent(), 0, 'unlocked from the controller');
    expect(sim.lock('LOCK-1')?.lockState).toBe('unlocked');
  });
});

describe('one-shot events have one effect', () => {
  let subscription: Subscription | undefined;
  afterAll(async () => {
    await subscription?.close();
  });

  it('a doorbell press redelivered after another press still rings once', async () => {
    const bell = await eventually(() => paired().accessory('Front Doorbell'), 'the Front Doorbell');
    const press = characteristicId(bell, S.Doorbell.UUID, C.ProgrammableSwitchEvent.UUID);
    subscription = await paired().subscribe([press]);
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'press-a' });
    const first = sim.deliveries.at(-1);
    await fire('doorbell-press', { doorbellId: 'BELL-1', dvrId: 'press-b' });
    // press A again as the service retries it: the same bytes with the t it was signed with
    expect(first?.body).toContain('press-a');
    const again = await sim.send(JSON.parse(first?.body ?? '{}') as object, { doorbellId: 'BELL-1', signature: { header: first?.requestHeaders['x-svc-signature'] ?? '' } });
    expect(again.every((r) => r.status === 200)).toBe(true);
    await fire('video-available', { doorbellId: 'BELL-1', dvrId: 'press-b' });
    await session.hb?.waitForLog(/Front Doorbell: Recording available/);
    expect(subscription.events.filter((e) => e.id === press)).toHaveLength(2);
  });

  it('the same person locking, unlocking and locking again from the app (identical bodies, no EventID, no event time) ends locked', async () => {
    const current = await lockCurrent();
    const body = (event: 'lock' | 'unlock') => ({ EventType: 'operation', Event: event, Device: 'lock', LockID: 'LOCK-1', User: { UserID: 'u-same', FirstName: 'Sam', LastName: 'Same', PhoneNo: 'n/a', Email: 'n/a', imageInfo: 'n/a' } });
    for (const [i, event] of (['lock', 'unlock', 'lock'] as const).entries()) {
      // each operation is signed anew, seconds apart, as the service signs a new event
      expect((await sim.send(body(event), { lockId: 'LOCK-1', signature: { skewMs: i * 2_000 } })).every((r) => r.status === 200)).toBe(true);
      await expectValue(current, event === 'lock' ? 1 : 0, `after the app ${event}`);
    }
    await expectValue(current, 1, 'locked after the third operation');
  });

  it('an operation redelivered with the same EventID (new bytes) applies once', async () => {
    const before = logCount(/Front Door: Locked by hand\./);
    const at = Date.now();
    const payload = manualOperation({ lockId: 'LOCK-1', event: 'lock', eventId: 'e2e-redelivered-lock', at, sentAt: at });
    expect((await sim.send(payload, { lockId: 'LOCK-1' })).every((r) => r.status === 200)).toBe(true);
    expect((await sim.send({ ...payload, timeStamp: at + 30_000 }, { lockId: 'LOCK-1' })).every((r) => r.status === 200)).toBe(true);
    await expectValue(await lockCurrent(), 1, 'locked by hand');
    // a later event shows both deliveries have been handled
    await fire('door-open', { lockId: 'LOCK-1' });
    await session.hb?.waitForLog(/Front Door: Door opened/);
    expect(logCount(/Front Door: Locked by hand\./) - before).toBe(1);
  });
});

describe('"an event time is evidence, not truth"', () => {
  it('a lock clock jumped a year ahead does not freeze the lock: the next real operation applies', async () => {
    const current = await lockCurrent();
    await play(lockClockJump({ lockId: 'LOCK-1' }), async (index) => {
      if (index === 1) await expectValue(current, 0, 'unlocked, stamped a year ahead');
    });
    await expectValue(current, 1, 'locked by hand after the clock was set right');
  });

  it('after lock_log_timestamp_drifted, operations stamped by the reset clock apply in arrival order', async () => {
    const current = await lockCurrent();
    const expected = [1, undefined, 0, 1, 0];
    await play(lockClockReset({ lockId: 'LOCK-1' }), async (index) => {
      const want = expected[index];
      if (want !== undefined) await expectValue(current, want, `after step ${index + 1}`);
    });
    await fire('lock-clock-fix', { lockId: 'LOCK-1' });
  });

  it('a signature clock off by less than the tolerance is accepted; beyond it the callback is refused (the simulator knob)', async () => {
    const current = await lockCurrent();
    sim.faults.signatureSkewMs = -200_000;
    try {
      await fire('lock', { lockId: 'LOCK-1', by: 'manual' });
      await expectValue(current, 1, 'locked with a signature 200 s old');
      sim.faults.signatureSkewMs = -400_000;
      const refused = await sim.fire('unlock', { lockId: 'LOCK-1', by: 'manual' });
      expect(refused.map((r) => r.status)).toEqual([401]);
      expect((await paired().readOne(current)).value).toBe(1);
    } finally {
      sim.faults.signatureSkewMs = 0;
    }
  });
});

import { describe, expect, it } from 'vitest';

import type { ApiClient } from '../../src/cloud/http/api.js';
import { AccountSetup, type AccountSetupDeps } from '../../src/cloud/account-setup.js';
import type { Registrar } from '../../src/cloud/link-control.js';
import { emptyReport } from '../../src/cloud/registrations/registration-report.js';
import { reasonMessage } from '../../src/util/reason-messages.js';
import type { DeviceEntry } from '../../src/model/device-entry.js';
import { runtimeConfig } from '../runtime/config-fixture.js';


interface Gate {
  open: () => void;
  promise: Promise<void>;
}
function gate(): Gate {
  const box: { open?: () => void } = {};
  const promise = new Promise<void>((resolve) => {
    box.open = resolve;
  });
  return { open: () => box.open?.(), promise };
}

/**
 * The service (a client answering discovery and remote operate), the registrar and the publishers
 * are recorders; the account setup is the thing under test.
 */
function setup(options: { discovery?: 'ok' | 'fails'; hold?: Gate; idle?: () => boolean; refresh?: boolean; cached?: DeviceEntry[]; listening?: boolean; noAddress?: boolean; me?: 'fails' } = {}) {
  const calls: string[] = [];
  const warnings: string[] = [];
  let shown: DeviceEntry[] = [];
  const client: ApiClient = {
    request: async <T>(method: string, path: string): Promise<T> => {
      calls.push(`${method} ${path}`);
      if (path === '/users/locks/mine') {
        await options.hold?.promise;
        if (options.discovery === 'fails') throw new Error('the service did not answer');
        return { L1: { LockName: 'Service name' }, L2: { LockName: 'Back Door' } } as T;
      }
      if (path === '/users/doorbells/mine') return {} as T;
      if (path === '/users/me') {
        if (options.me === 'fails') throw new Error('the service did not answer');
        return { UserID: 'me-1', FirstName: 'Alex' } as T;
      }
      return undefined as T;
    },
  };
  const registrar: Registrar = {
    reconcile: (wanted) => {
      calls.push(`reconcile ${wanted.locks.join(',')} user=${String(wanted.user)}`);
      // Without a public address yet (a tunnel still connecting) the registrar registers nothing.
      if (options.noAddress === true) return Promise.resolve(emptyReport(true));
      return Promise.resolve({ registered: wanted.locks.map((id) => `lock:${id}`), deleted: [], unchanged: [], failed: [], authorizationLost: false, skipped: false });
    },
    addressChanged: () => undefined,
    sendAllAgain: () => Promise.reject(new Error('not used here')),
    status: () => [],
    unlinkAll: () => Promise.resolve({ deleted: 0, left: [] }),
    knownRegistrations: () => Promise.resolve([]),
    stop: () => undefined,
  };
  const status = { registrations: () => calls.push('status registrations'), knownFrom: () => calls.push('status sources') };
  const deps: AccountSetupDeps = {
    config: runtimeConfig({ locks: [{ id: 'L1', name: 'Front Door' }], refreshStateOnStart: options.refresh ?? false }),
    log: { info: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m), debug: () => undefined },
    client,
    registry: {
      remembered: () => options.cached ?? [],
      sync: (wanted, sweep) => {
        shown = [...wanted];
        calls.push(`sync ${wanted.map((d) => `${d.id}=${d.name}`).join(',')} sweep=${String(sweep)}`);
      },
      remove: (kind, id) => {
        shown = shown.filter((d) => !(d.kind === kind && d.id === id));
        calls.push(`remove ${kind}:${id}`);
      },
      lockIds: () => shown.filter((d) => d.kind === 'lock').map((d) => d.id),
      doorbellIds: () => shown.filter((d) => d.kind === 'doorbell').map((d) => d.id),
      nameOf: (_kind, id) => id,
    },
    status,
    isIdle: options.idle ?? (() => false),
    isStopped: () => false,
    registrar: () => registrar,
    listening: () => options.listening ?? false,
    selfCheck: () => {
      calls.push('self-check');
      return Promise.resolve();
    },
  };
  return { convergence: new AccountSetup(deps), calls, warnings };
}

/** Lets every queued promise of a run settle (no timers involved). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('start-up reconciles with what the service lists', () => {
  it('discovery, the device set for every publisher (swept), registration of what is shown, then the state refresh on the first run only', async () => {
    const { convergence, calls } = setup({ refresh: true });
    convergence.request();
    await settle();
    expect(calls).toEqual([
      // Who the account's own user is, read once for the removals to come.
      'GET /users/me',
      'GET /users/locks/mine',
      'GET /users/doorbells/mine',
      // Where each device is known from reaches the status before the device list follows the sync.
      'status sources',
      'sync L1=Front Door,L2=Back Door sweep=true',
      'reconcile L1,L2 user=true',
      'status registrations',
      'PUT /remoteoperate/L1/status',
      'PUT /remoteoperate/L2/status',
    ]);
    expect(convergence.sourceOf('lock:L1')).toBe('both');
    expect(convergence.sourceOf('lock:L2')).toBe('service');
    calls.length = 0;
    convergence.request();
    await settle();
    expect(calls.filter((c) => c.startsWith('PUT'))).toEqual([]);
  });

  it('a failed discovery never removes devices: the configured and cached ones are shown without a sweep', async () => {
    const { convergence, calls, warnings } = setup({ discovery: 'fails', cached: [{ kind: 'lock', id: 'L9', name: 'Garage', doorSensor: false }] });
    convergence.request();
    await settle();
    expect(calls).toContain('sync L1=Front Door,L9=Garage sweep=false');
    expect(warnings.join('\n')).toMatch(/Could not ask the service for your devices: the list of locks could not be fetched \(the service did not answer\); the locks known from the last run stay/);
  });

  it('"one run at a time": requests during a run are folded into one more run afterwards', async () => {
    const hold = gate();
    const { convergence, calls } = setup({ hold });
    convergence.request();
    convergence.request();
    convergence.request();
    await settle();
    hold.open();
    await settle();
    expect(calls.filter((c) => c === 'GET /users/locks/mine')).toHaveLength(2);
    expect(calls.filter((c) => c.startsWith('reconcile'))).toHaveLength(2);
  });

  it('an unlink while discovery runs stops the run before anything is registered', async () => {
    const hold = gate();
    let idle = false;
    const { convergence, calls } = setup({ hold, idle: () => idle });
    convergence.request();
    await settle();
    idle = true;
    hold.open();
    await settle();
    expect(calls.filter((c) => c.startsWith('reconcile'))).toEqual([]);
  });

  it('a run waiting for a check (is this account another user?) counts as asked for: settled() waits for the answer and the run it allows', async () => {
    const { convergence, calls } = setup();
    const answer = gate();
    convergence.requestIf(answer.promise.then(() => true));
    let settled = false;
    const done = convergence.settled().then((waited) => {
      settled = true;
      return waited;
    });
    await settle();
    // The check has not answered: no run yet, and the setup is not settled.
    expect(calls).toEqual([]);
    expect(settled).toBe(false);
    answer.open();
    expect(await done).toBe(true);
    expect(calls).toContain('reconcile L1,L2 user=true');
  });

  it('a check that says no, or fails, starts no run and settles the setup (a failure is logged)', async () => {
    const { convergence, calls, warnings } = setup();
    convergence.requestIf(Promise.resolve(false));
    convergence.requestIf(Promise.reject(new Error('the service did not answer')));
    expect(await convergence.settled()).toBe(true);
    expect(await convergence.settled()).toBe(false);
    expect(calls).toEqual([]);
    expect(warnings.join('\n')).toMatch(/could not check whether this account may set up \(the service did not answer\)/);
  });

  it('idle: nothing is asked of the service', async () => {
    const { convergence, calls } = setup({ idle: () => true });
    convergence.request();
    await settle();
    expect(calls).toEqual([]);
  });
});

describe('a lock removed by lock_user_remove leaves at once and stays out', () => {
  it('it is removed from every publisher now, and the next run neither shows nor registers it', async () => {
    const { convergence, calls } = setup();
    convergence.request();
    await settle();
    calls.length = 0;
    convergence.membershipChanged('L2', 'removed', 'me-1');
    await settle();
    expect(calls[0]).toBe('remove lock:L2');
    expect(calls).toContain('sync L1=Front Door sweep=true');
    expect(calls).toContain('reconcile L1 user=true');
  });

  it('when the service cannot say who the account\'s user is, the lock stays and the service\'s device list decides in a run now', async () => {
    const { convergence, calls } = setup({ me: 'fails' });
    convergence.request();
    await settle();
    calls.length = 0;
    convergence.membershipChanged('L2', 'removed', 'me-1');
    await settle();
    expect(calls).not.toContain('remove lock:L2');
    expect(calls).toContain('GET /users/locks/mine');
    expect(calls).toContain('reconcile L1,L2 user=true');
  });

  it('another person\'s removal changes nothing: no removal, no run', async () => {
    const { convergence, calls } = setup();
    convergence.request();
    await settle();
    calls.length = 0;
    convergence.membershipChanged('L2', 'removed', 'guest-7');
    await settle();
    expect(calls).toEqual([]);
  });
});

describe('the first run checks the public address once the listener runs; the check then repeats on its own', () => {
  it('asks for the self-check on the first run only, and only while listening', async () => {
    const listening = setup({ listening: true });
    listening.convergence.request();
    await settle();
    listening.convergence.request();
    await settle();
    expect(listening.calls.filter((c) => c === 'self-check')).toHaveLength(1);
    const deaf = setup({ listening: false });
    deaf.convergence.request();
    await settle();
    expect(deaf.calls).not.toContain('self-check');
  });
});

describe('refreshStateOnStart with a public address that comes late (a tunnel connecting)', () => {
  it('no lock is asked before anything is registered; once the first registrations at the address succeed, every lock is asked once', async () => {
    const { convergence, calls } = setup({ refresh: true, noAddress: true });
    convergence.request();
    await settle();
    expect(calls.filter((call) => call.startsWith('PUT'))).toEqual([]);
    // The tunnel connected but its registrations failed: still nothing to ask.
    await convergence.registered({ ...emptyReport(false), failed: [{ key: 'lock:L1', error: 'busy', reason: reasonMessage('reason.bridgeBusy') }] });
    expect(calls.filter((call) => call.startsWith('PUT'))).toEqual([]);
    await convergence.registered({ ...emptyReport(false), registered: ['lock:L1', 'lock:L2', 'user'] });
    expect(calls.filter((call) => call.startsWith('PUT'))).toEqual(['PUT /remoteoperate/L1/status', 'PUT /remoteoperate/L2/status']);
    // Once: a later address (a reconnect at a new one) asks nothing again.
    await convergence.registered({ ...emptyReport(false), registered: ['lock:L1', 'lock:L2', 'user'] });
    expect(calls.filter((call) => call.startsWith('PUT'))).toHaveLength(2);
  });

  it('without refreshStateOnStart, a late address asks no lock', async () => {
    const { convergence, calls } = setup({ refresh: false, noAddress: true });
    convergence.request();
    await settle();
    await convergence.registered({ ...emptyReport(false), registered: ['lock:L1'] });
    expect(calls.filter((call) => call.startsWith('PUT'))).toEqual([]);
  });
});

import { describe, expect, it, vi } from 'vitest';

import type { LinkState } from '../../src/cloud/tokens/token-manager.js';
import { LinkControl, type LinkControlDeps, type Registrar } from '../../src/cloud/link-control.js';

/** A registrar that records what it is asked; the link control is the thing under test. */
function fakeRegistrar(name: string, calls: string[]): Registrar {
  return {
    reconcile: () => Promise.reject(new Error('not used here')),
    addressChanged: () => undefined,
    sendAllAgain: (reason) => {
      calls.push(`${name} sendAllAgain: ${reason}`);
      return Promise.resolve({ registered: [], deleted: [], unchanged: [], failed: [], authorizationLost: false, skipped: true });
    },
    status: () => [],
    unlinkAll: () => {
      calls.push(`${name} unlinkAll`);
      return Promise.resolve({ deleted: 3, left: [] });
    },
    knownRegistrations: () => Promise.resolve([]),
    stop: () => {
      calls.push(`${name} stop`);
    },
  };
}

function setup() {
  const calls: string[] = [];
  const warnings: string[] = [];
  let made = 0;
  const deps: LinkControlDeps = {
    log: { info: (m) => calls.push(`info ${m}`), warn: (m) => warnings.push(m), error: () => undefined, debug: () => undefined },
    status: {
      link: (state: LinkState) => calls.push(`status link ${state}`),
      registrations: (list) => calls.push(`status registrations ${String(list.length)}`),
    },
    newRegistrar: () => fakeRegistrar(`registrar${String(++made)}`, calls),
    tokens: {
      canAuthenticate: () => true,
      unlink: () => {
        calls.push('forget tokens');
        return Promise.resolve();
      },
    },
    converge: (asFirstRun) => calls.push(`converge ${String(asFirstRun)}`),
  };
  return { link: new LinkControl(deps), calls, warnings };
}

describe('user unlink deletes every registration and the tokens', () => {
  it('registrations first, then tokens, then the status shows none; the plugin stays idle and says how to resume', async () => {
    const { link, calls, warnings } = setup();
    expect(link.idle).toBe(false);
    await link.unlink('the Lock Access account was deleted');
    expect(calls).toEqual(['registrar1 unlinkAll', 'registrar1 stop', 'forget tokens', 'status registrations 0']);
    expect(link.idle).toBe(true);
    expect(link.registrar).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/unlinked because the Lock Access account was deleted.*Link the account again/);
  });

  it('a second unlink while idle does nothing', async () => {
    const { link, calls } = setup();
    await link.unlink('first');
    calls.length = 0;
    await link.unlink('second');
    expect(calls).toEqual([]);
  });

  it('unlinked in the settings UI (which deleted the registrations): the registrar stops, nothing is deleted again', async () => {
    const { link, calls } = setup();
    link.onLinkState('unlinked');
    expect(link.idle).toBe(true);
    // A fresh registrar, stopped at once, only reads the ledger that process left, for the status page.
    await vi.waitFor(() => {
      expect(calls).toEqual(['status link unlinked', 'registrar1 stop', 'registrar2 stop', 'status registrations 0']);
    });
    expect(calls.some((call) => call.includes('unlinkAll'))).toBe(false);
  });
});

describe('linking again resumes', () => {
  it('linked while idle: a fresh registrar that sends every registration again, and a first setup run (self-check and state refresh again)', async () => {
    const { link, calls } = setup();
    await link.unlink('test');
    calls.length = 0;
    link.onLinkState('linked');
    expect(link.idle).toBe(false);
    // The list of registrations the unlinking process left may be out of date (a run of this
    // process may have written it after that unlink): everything is sent, whatever it says.
    expect(calls).toEqual(['status link linked', 'registrar2 sendAllAgain: the account was linked again', 'info Lock Access is linked again: registering webhooks.', 'converge true']);
    link.stop();
    expect(calls.at(-1)).toBe('registrar2 stop');
  });

  it('linked while running (a token refresh): the status follows and setup runs again, not as a first run', () => {
    const { link, calls } = setup();
    link.onLinkState('linked');
    expect(calls).toEqual(['status link linked', 'converge false']);
  });

  it('re-authorization needed: only the status changes; HomeKit keeps serving', () => {
    const { link, calls } = setup();
    link.onLinkState('reauthorizationNeeded');
    expect(calls).toEqual(['status link reauthorizationNeeded']);
    expect(link.idle).toBe(false);
  });
});

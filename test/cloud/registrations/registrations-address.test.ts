// Design "Reach", address changes: when the public address changes (the config between restarts,
// or a tunnel's address while running), every registration is sent again at once with the new
// address, not at the next daily refresh; without an address nothing is registered anywhere.
import { describe, expect, it } from 'vitest';

import { ALL_HOOKS, manualTimers, registrarTestBed } from './registrar-harness.js';

const urlsAtService = (bed: ReturnType<typeof registrarTestBed>) => bed.fx.sim.registrations().map((reg) => reg.url).sort();

describe('design "Reach": a changed public address is registered at once', () => {
  const bed = registrarTestBed();

  it('a restart with another webhook.publicUrl sends every registration again with the new address, in its first run', async () => {
    const first = await bed.registrar();
    await first.registrar.reconcile(ALL_HOOKS);
    const moved = `${bed.fx.target.url.replace('/lock-access', '')}/moved`;
    const second = await bed.registrar({ publicUrl: moved });
    const report = await second.registrar.reconcile(ALL_HOOKS);
    expect(report.registered.sort()).toEqual(['doorbell:BELL-1', 'lock:LOCK-000', 'lock:LOCK-001', 'user']);
    expect(urlsAtService(bed).every((url) => url.startsWith(`${moved}/`))).toBe(true);
    expect(second.registrar.status().every((row) => row.url.startsWith(`${moved}/`))).toBe(true);
  });

  it('an address adopted while running (a tunnel) re-sends every registration at once, without waiting for a timer', async () => {
    const { timers, pending } = manualTimers();
    const { registrar, address } = await bed.registrar({ timers });
    await registrar.reconcile(ALL_HOOKS);
    const tunnel = `${bed.fx.target.url.replace('/lock-access', '')}/via-tunnel`;
    const posts = () => bed.events.filter((e) => e.type === 'start' && e.method === 'POST').length;
    const before = posts();
    address.url = tunnel;
    const report = await registrar.addressChanged();
    expect(report?.registered).toHaveLength(4);
    expect(posts() - before).toBe(4);
    expect(urlsAtService(bed).every((url) => url.startsWith(`${tunnel}/`))).toBe(true);
    // The next run is the daily refresh again, not a retry.
    expect(pending).toHaveLength(1);
    expect(pending[0]?.ms).toBeGreaterThan(23 * 60 * 60 * 1000);
    // The same address again sends nothing: the ledger shows every registration current there.
    const again = await registrar.addressChanged();
    expect(again?.registered).toEqual([]);
    expect(posts() - before).toBe(4);
  });

  it('without a public address (a tunnel not connected yet) nothing is registered, deleted or scheduled; the address then registers what was wanted', async () => {
    const { timers, pending } = manualTimers();
    const { registrar, address } = await bed.registrar({ timers, publicUrl: null });
    const report = await registrar.reconcile(ALL_HOOKS);
    expect(report.skipped).toBe(true);
    expect(report.registered).toEqual([]);
    expect(bed.fx.sim.registrations()).toEqual([]);
    expect(bed.events.filter((e) => e.type === 'start')).toEqual([]);
    expect(pending).toEqual([]);
    address.url = bed.fx.target.url;
    const adopted = await registrar.addressChanged();
    expect(adopted?.registered).toHaveLength(4);
    expect(urlsAtService(bed)).toHaveLength(4);
  });
});

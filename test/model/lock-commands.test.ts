import { describe, expect, it } from 'vitest';

import { CommandSupersededError, LockCommands, type LockAction } from '../../src/model/lock-commands.js';

function controllable() {
  const runs: { action: LockAction; finish: () => void }[] = [];
  const commands = new LockCommands(
    (action) =>
      new Promise<void>((resolve) => {
        runs.push({ action, finish: resolve });
      }),
  );
  return { commands, runs };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrent commands to one lock are serialised', () => {
  it('"a command in flight is not repeated": the same target again joins it', async () => {
    const { commands, runs } = controllable();
    const first = commands.request('lock');
    const second = commands.request('lock');
    expect(runs.map((r) => r.action)).toEqual(['lock']);
    runs[0]?.finish();
    await Promise.all([first, second]);
    expect(runs).toHaveLength(1);
  });

  it('a different target waits until the running command has finished', async () => {
    const { commands, runs } = controllable();
    void commands.request('lock');
    const unlock = commands.request('unlock');
    expect(runs.map((r) => r.action)).toEqual(['lock']);
    expect(commands.next).toBe('unlock');
    runs[0]?.finish();
    await tick();
    expect(runs.map((r) => r.action)).toEqual(['lock', 'unlock']);
    runs[1]?.finish();
    await unlock;
    expect(commands.current).toBeUndefined();
  });

  it('a newer wish replaces a waiting command that has not started', async () => {
    const { commands, runs } = controllable();
    void commands.request('lock');
    void commands.request('unlock');
    const back = commands.request('lock');
    expect(commands.next).toBeUndefined();
    runs[0]?.finish();
    await back;
    await tick();
    expect(runs.map((r) => r.action)).toEqual(['lock']);
  });

  it('a failing command (execute rejecting) does not block the next one', async () => {
    const actions: LockAction[] = [];
    const commands = new LockCommands(async (action) => {
      actions.push(action);
      await Promise.resolve();
      if (action === 'lock') throw new Error('boom');
    });
    void commands.request('lock');
    await commands.request('unlock');
    expect(actions).toEqual(['lock', 'unlock']);
  });

  it('every request learns the outcome of the command it joined: a failure reaches all who joined it, success the rest', async () => {
    const runs: { action: LockAction; resolve: () => void; reject: (error: Error) => void }[] = [];
    const commands = new LockCommands(
      (action) =>
        new Promise<void>((resolve, reject) => {
          runs.push({ action, resolve, reject });
        }),
    );
    const first = commands.request('lock');
    const joined = commands.request('lock');
    const waiting = commands.request('unlock');
    const failure = new Error('bridge offline');
    runs[0]?.reject(failure);
    expect(await first).toEqual({ ok: false, error: failure });
    expect(await joined).toEqual({ ok: false, error: failure });
    await tick();
    expect(runs.map((r) => r.action)).toEqual(['lock', 'unlock']);
    runs[1]?.resolve();
    expect(await waiting).toEqual({ ok: true });
  });

  it('callers of a dropped waiting command learn that it never ran; the running one goes on', async () => {
    const runs: { resolve: () => void }[] = [];
    const commands = new LockCommands(() => new Promise<void>((resolve) => runs.push({ resolve })));
    const running = commands.request('lock');
    const dropped = commands.request('unlock');
    const back = commands.request('lock');
    const outcome = await dropped;
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? undefined : outcome.error).toBeInstanceOf(CommandSupersededError);
    runs[0]?.resolve();
    expect(await Promise.all([running, back])).toEqual([{ ok: true }, { ok: true }]);
    expect(runs).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';

import { LockCommands, type LockAction } from '../../src/devices/lock-commands.js';

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

describe('issue 7.3: concurrent commands to one lock are serialised', () => {
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
});

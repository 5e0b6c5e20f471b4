// The status file's link entry shows what the token manager says beyond the bare state: a client
// id or secret the service refused gets its own state, tokens not saved yet get their message,
// and a message-only change keeps the time the state began.
import { describe, expect, it } from 'vitest';

import { linkMessage } from '../../src/cloud/link-messages.js';
import type { TokenProblem } from '../../src/cloud/tokens/token-manager.js';
import { StatusPublisher } from '../../src/status/status-publisher.js';
import { StatusWriter } from '../../src/status/status.js';
import { Storage } from '../../src/storage.js';
import { tempDirEachTest } from '../fixtures/token-harness.js';

const temp = tempDirEachTest();

async function publisherWith(view: { message?: string; problem?: TokenProblem; setting?: string }, now: { t: number }) {
  const status = await StatusWriter.open(new Storage(temp.dir), { now: () => now.t });
  const publisher = new StatusPublisher({
    status,
    eventLog: {} as never,
    linkMessage: () => view.message,
    linkProblem: () => view.problem,
    linkSetting: () => view.setting,
    now: () => now.t,
  });
  return { status, publisher };
}

describe('the status file names a setting to fix and unsaved tokens', () => {
  it('a refused client secret shows as "checkSettings" with the advice; fixed, it is "linked" again', async () => {
    const view: { message?: string; problem?: TokenProblem; setting?: string } = {};
    const now = { t: 1000 };
    const { status, publisher } = await publisherWith(view, now);
    publisher.link('linked');
    expect(status.status.link.state).toBe('linked');
    view.problem = 'settings';
    view.message = 'Fix clientSecret in the plugin settings and restart Homebridge';
    publisher.link('linked');
    // The page gets the code; the token manager's sentence (with the setting's name) is in the log.
    expect(status.status.link).toMatchObject({ state: 'checkSettings', message: { code: 'link.checkSettings', params: {} } });
    // When the token service said which setting it refused, the page names that field.
    view.setting = 'clientSecret';
    publisher.link('linked');
    expect(status.status.link).toMatchObject({ state: 'checkSettings', message: { code: 'link.checkSetting', params: { field: 'clientSecret' } } });
    delete view.setting;
    delete view.problem;
    delete view.message;
    publisher.link('linked');
    expect(status.status.link.state).toBe('linked');
  });

  it('tokens not saved yet: the link stays "linked", the message says why, and "since" keeps the state\'s start', async () => {
    const view: { message?: string; problem?: TokenProblem } = {};
    const now = { t: 1000 };
    const { status, publisher } = await publisherWith(view, now);
    publisher.link('linked');
    now.t = 5000;
    view.problem = 'notSaved';
    view.message = 'The renewed tokens are in use but not saved yet (the disk is full (ENOSPC)).';
    publisher.link('linked');
    // Why the save failed (an English error) stays in the log: the page gets the code alone.
    expect(status.status.link).toEqual({ state: 'linked', message: linkMessage('link.tokensNotSaved'), since: 1000 });
    expect(JSON.stringify(status.status.link)).not.toContain('ENOSPC');
  });
});

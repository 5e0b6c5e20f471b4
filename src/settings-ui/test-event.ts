// "Send a test event": asks the service for a lock's status (PUT /remoteoperate/{id}/status), which
// makes it call the plugin's public address with a signed `status` callback, then reads the
// plugin's status file until it says what came of it. This is the one check that proves the whole
// way from the service to HomeKit. The page starts it, then asks for the verdict until it is final.
import { operateLock } from '../cloud/remote-operate.js';
import { recordTestEvent } from '../status/support-record.js';
import { readStatus } from '../status/status.js';
import type { Account } from './account-input.js';
import type { CloudSession } from './cloud-session.js';
import { failureMessage } from './failure-message.js';
import { judgeTestEvent, testEventAddress, type TestEventVerdict } from './test-event-verdict.js';
import { UiError } from './ui-error.js';

export interface TestEventStart {
  lockId: string;
  startedAt: number;
}

export class TestEvents {
  constructor(
    private readonly session: CloudSession,
    private readonly now: () => number,
  ) {}

  /** Step 1: the service is asked; the answer says when, so the page can ask for the verdict. */
  async start(account: Account, lockId: string): Promise<TestEventStart> {
    // No address to call (a tunnel not connected): say so now rather than after 30 s of silence.
    const address = testEventAddress(await readStatus(this.session.storage), account.publicUrl);
    if ('problem' in address) throw new UiError(address.problem);
    const startedAt = this.now();
    try {
      await this.session.withTokens(account, async (tokens) => {
        await operateLock(await this.session.client(account, tokens), lockId, 'status');
      });
    } catch (error) {
      const message = failureMessage(this.session.log, 'server.testEvent.notTaken', error);
      await recordTestEvent(this.session.storage, { lockId, startedAt, state: 'requestFailed', message: message.text }).catch(() => undefined);
      throw new UiError(message);
    }
    return { lockId, startedAt };
  }

  /** Step 2, asked again until final: what the plugin's listener saw since the start. */
  async verdict(account: Account, start: TestEventStart): Promise<TestEventVerdict> {
    const status = await readStatus(this.session.storage);
    const address = testEventAddress(status, account.publicUrl);
    if ('problem' in address) throw new UiError(address.problem);
    const verdict = judgeTestEvent(status, { ...start, now: this.now(), publicUrl: address.url, ...(account.id === undefined ? {} : { accountId: account.id }) });
    if (verdict.state !== 'waiting') {
      await recordTestEvent(this.session.storage, { ...start, state: verdict.state, message: verdict.message.text, ...(verdict.state === 'passed' ? { tookMs: verdict.tookMs } : {}) }).catch(() => undefined);
    }
    return verdict;
  }
}

// What the token manager knows now (a refused token is never used again; "re-authorization
// needed" is logged once with what to do).
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type LinkState, TokenSession } from '../../../src/cloud/tokens/token-session.js';
import { REAUTHORIZATION_ADVICE } from '../../../src/cloud/tokens/token-session.js';
import { TokenStore } from '../../../src/storage/token-file.js';
import { Storage } from '../../../src/storage.js';
import { type CapturedLog, captureLog, linkedRecord as record, tempDir } from '../../fixtures/token-harness.js';

let dir: string;
let cleanup: () => Promise<void>;
let log: CapturedLog;
let session: TokenSession;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  log = captureLog();
  session = new TokenSession(new TokenStore(new Storage(join(dir, 'lock-access'))), log, () => 5_000);
});

afterEach(async () => {
  await cleanup();
});

describe('the record on disk decides which access token is in use', () => {
  it('adopting a record takes its access token with its times, and its link state and message', () => {
    session.adopt(record({ state: 'reauthorizationNeeded', message: 'refused' }));
    expect(session.current).toEqual({ token: 'access-1', expiresAt: 2_000, issuedAt: 1_000 });
    expect(session.state).toBe('reauthorizationNeeded');
    expect(session.status()).toEqual({ state: 'reauthorizationNeeded', accessTokenExpiresAt: 2_000, message: 'refused' });
  });

  it('a token the service refused is never taken back from a record', () => {
    session.rememberRejected('access-1');
    session.adopt(record());
    expect(session.current).toBeUndefined();
    expect(session.state).toBe('linked');
  });

  it('the same record again keeps a newer token from a header; a new rotation replaces it', () => {
    session.adopt(record());
    session.useAccess({ token: 'from-a-header', expiresAt: 3_000 });
    session.adopt(record({ generation: 2 }));
    expect(session.currentToken()).toBe('from-a-header');
    session.adopt(record({ generation: 3, rotations: 2, accessToken: 'access-2' }));
    expect(session.currentToken()).toBe('access-2');
    session.adopt(record({ generation: 4, rotations: 3, accessToken: undefined }));
    expect(session.currentToken()).toBeUndefined();
  });

  it('no record is "unlinked", with no token', () => {
    session.adopt(record());
    session.adopt(undefined);
    expect(session.state).toBe('unlinked');
    expect(session.current).toBeUndefined();
    expect(session.refreshUsable()).toBe(false);
  });

  it('refused tokens are remembered, a bounded number of them', () => {
    for (let i = 0; i < 16; i++) session.rememberRejected(`t${i}`);
    expect(session.isRejected('t0')).toBe(true);
    session.rememberRejected('t16');
    expect(session.isRejected('t16')).toBe(true);
    expect(session.isRejected('t0')).toBe(false);
  });
});

describe('link state changes reach listeners once, and "link again" is logged once', () => {
  it('listeners hear each change once; a listener that throws does not stop the others', () => {
    const heard: LinkState[] = [];
    session.onStateChange(() => {
      throw new Error('listener broke');
    });
    const off = session.onStateChange((state) => heard.push(state));
    session.setState('linked', undefined);
    session.setState('linked', 'same state, new note');
    session.setState('reauthorizationNeeded', 'refused');
    off();
    session.setState('unlinked', undefined);
    expect(heard).toEqual(['linked', 'reauthorizationNeeded']);
    expect(session.message).toBeUndefined();
    expect(log.text('debug').filter((line) => line.includes('a link-state listener failed'))).toHaveLength(3);
  });

  it('"logged once with what to do": one error per loss of the link, again after a new link is lost', () => {
    session.setState('reauthorizationNeeded', undefined);
    session.logReauthorization('the refresh token was refused.');
    session.logReauthorization('the refresh token was refused.');
    expect(log.text('error')).toEqual([`Lock Access needs you to link your account again: the refresh token was refused. ${REAUTHORIZATION_ADVICE}`]);
    session.setState('linked', undefined);
    session.setState('reauthorizationNeeded', undefined);
    session.logReauthorization('again.');
    expect(log.text('error')).toHaveLength(2);
  });
});

describe('work in flight is tracked until it settles', () => {
  it('settled() waits for tracked work, failed work included', async () => {
    const order: string[] = [];
    let finish: () => void = () => undefined;
    void session.track(
      new Promise<void>((resolve) => {
        finish = resolve;
      }).then(() => order.push('work')),
    );
    void session.track(Promise.reject(new Error('failed work'))).catch(() => undefined);
    const settled = session.settled().then(() => order.push('settled'));
    await Promise.resolve();
    expect(order).toEqual([]);
    finish();
    await settled;
    expect(order).toEqual(['work', 'settled']);
  });
});

import { describe, expect, it } from 'vitest';

import type { LockEvent } from '../../src/model/events.js';
import { reachabilityProof } from '../../src/model/reachability.js';

const actor = { kind: 'person', userId: 'u1' } as const;
const lockState = (source: 'operation' | 'status', device: 'lock' | 'keypad' = 'lock'): LockEvent => ({ lockId: 'L1', at: 1, kind: 'lockState', state: 'locked', source, device, actor });

describe('"until the bridge is proven reachable: online, a status callback, or a successful remote command"', () => {
  it('online and status callbacks prove it', () => {
    expect(reachabilityProof({ lockId: 'L1', at: undefined, kind: 'online', online: true })).toBe('online');
    expect(reachabilityProof(lockState('status'))).toBe('status');
  });

  it('offline, operations (app, keypad, by hand), door and battery reports do not', () => {
    expect(reachabilityProof({ lockId: 'L1', at: undefined, kind: 'online', online: false })).toBeUndefined();
    expect(reachabilityProof(lockState('operation'))).toBeUndefined();
    expect(reachabilityProof(lockState('operation', 'keypad'))).toBeUndefined();
    expect(reachabilityProof({ lockId: 'L1', at: 1, kind: 'doorState', state: 'open' })).toBeUndefined();
    expect(reachabilityProof({ lockId: 'L1', at: undefined, kind: 'battery', device: 'lock', raw: 'x' })).toBeUndefined();
  });
});

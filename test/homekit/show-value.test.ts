import { describe, expect, it } from 'vitest';

import { showValue } from '../../src/homekit/services.js';
import { hapEnvs } from './hap-env.js';

describe.each(hapEnvs)('showValue ($label)', ({ api }) => {
  const { Service: S, Characteristic: C } = api.hap;

  it('passes a new value through HAP, with its change event', () => {
    const current = new S.LockMechanism('Front Door').getCharacteristic(C.LockCurrentState);
    const changes: unknown[] = [];
    current.on('change', (change: { newValue: unknown }) => changes.push(change.newValue));
    showValue(current, C.LockCurrentState.SECURED);
    showValue(current, C.LockCurrentState.UNSECURED);
    expect(current.value).toBe(C.LockCurrentState.UNSECURED);
    expect(changes).toEqual([C.LockCurrentState.SECURED, C.LockCurrentState.UNSECURED]);
  });

  it('leaves a value that is already shown alone: no change event for controllers to drop', () => {
    const contact = new S.ContactSensor('Front Door Door').getCharacteristic(C.ContactSensorState);
    showValue(contact, C.ContactSensorState.CONTACT_NOT_DETECTED);
    const changes: unknown[] = [];
    contact.on('change', (change: { newValue: unknown }) => changes.push(change.newValue));
    showValue(contact, C.ContactSensorState.CONTACT_NOT_DETECTED);
    expect(changes).toEqual([]);
    showValue(contact, C.ContactSensorState.CONTACT_DETECTED);
    expect(changes).toEqual([C.ContactSensorState.CONTACT_DETECTED]);
  });
});

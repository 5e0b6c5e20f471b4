// The spec's registration requests: paths and the body ("Register a lock webhook" ... "Delete
// registrations").
import { describe, expect, it } from 'vitest';

import { desiredRegistrations } from '../../../src/cloud/registrations/registration-plan.js';
import { deletePath, registerPath, registrationBody } from '../../../src/cloud/registrations/registration-requests.js';
import { context } from './registration-entries.js';

describe('spec "Webhook registration": exact bodies and paths', () => {
  it('body = url, method POST, clientID, header x-lock-access-token, token, notificationTypes', () => {
    const [lock] = desiredRegistrations({ locks: ['L1'], doorbells: [], user: false }, context);
    if (!lock) throw new Error('missing');
    expect(registrationBody(lock, 'secret-token')).toEqual({
      url: 'https://home.example.net/lock-access/lock/L1',
      method: 'POST',
      clientID: 'client-1',
      header: 'x-lock-access-token',
      token: 'secret-token',
      notificationTypes: ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'],
    });
  });

  it('register and DELETE paths of the spec, ids escaped', () => {
    expect(registerPath('lock', 'L/1')).toBe('/webhook/L%2F1');
    expect(registerPath('doorbell', 'D1')).toBe('/webhook/doorbell/D1');
    expect(registerPath('user', '')).toBe('/webhook/user');
    expect(deletePath('lock', 'L1', 'c 1')).toBe('/webhook/L1/c%201');
    expect(deletePath('doorbell', 'D1', 'c1')).toBe('/webhook/doorbell/D1/c1');
    expect(deletePath('user', '', 'c1')).toBe('/webhook/user/c1');
  });
});

// Extra demo accounts for `npm run sim -- --account cabin=Cabin` and `npm start`: each a home of its
// own with one lock and one doorbell, optionally linked through the main account's integration.
import type { AccountInput } from './accounts.js';
import type { DoorbellInput, LockInput } from './devices.js';

export interface DemoAccount {
  account: AccountInput;
  locks: LockInput[];
  doorbells: DoorbellInput[];
}

/** `cabin=Cabin` or `cabin` (named after its id). */
export function parseAccountSpec(spec: string): { id: string; name: string } {
  const [id = '', ...rest] = spec.split('=');
  const name = rest.join('=').trim();
  return { id: id.trim(), name: name === '' ? id.trim() : name };
}

/** The account and its devices: lock `LOCK-<ID>` "<name> Door" (door sensor, keypad), doorbell `DOORBELL-<ID>`. */
export function demoAccount(id: string, name: string, shared: boolean): DemoAccount {
  const suffix = id.toUpperCase();
  return {
    account: { id, name, ...(shared ? { shareKey: true, shareClient: true } : {}) },
    locks: [{ id: `LOCK-${suffix}`, name: `${name} Door`, doorSensor: true, keypad: true, houseName: name, accounts: [id] }],
    doorbells: [{ id: `DOORBELL-${suffix}`, name: `${name} Doorbell`, accounts: [id] }],
  };
}

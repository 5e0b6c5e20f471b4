// How the config lists a lock, a doorbell and a person: shared by the block's own lists and by the
// lists of each extra account.
import { z } from 'zod/v3';

import { doorbellSettingsSchema, lockSettingsSchema } from '../model/device-entry.js';
import { configProblem } from './config-messages.js';
import { deviceId, ownerField, switchField } from './fields.js';

/** The entry schemas, made when the config is checked and dropped after (see configSchema). */
export function deviceConfigSchemas() {
  const hiddenField = switchField('hidden').default(false);
  /** A lock as the config lists it: its id, perhaps a name, whether it is hidden, the account that owns it, and its settings. */
  const lock = z.object({ id: deviceId('lock'), name: z.string().optional(), hidden: hiddenField, account: ownerField() }).merge(lockSettingsSchema);
  /** A doorbell as the config lists it. */
  const doorbell = z.object({ id: deviceId('doorbell'), name: z.string().optional(), hidden: hiddenField, account: ownerField() }).merge(doorbellSettingsSchema);
  /** Someone whose unlocks and locks become an automation trigger on every lock. */
  const person = z.object({
    userId: z.string({ message: configProblem('config.person.userIdMissing') }).trim().regex(/\S/, configProblem('config.person.userIdEmpty')),
    /** Shown in Apple Home; the userId stands in when it is left empty. */
    name: z.string().trim().optional(),
  });
  return { lock, doorbell, person };
}

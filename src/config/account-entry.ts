// One entry of `accounts`: an extra account of the service behind the same listener. Fields it
// leaves out take the top-level value; the block's other settings apply to every account.
import { z } from 'zod/v3';

import { deviceConfigSchemas } from './device-configs.js';
import { ACCOUNT_ID_PATTERN, MAIN_ACCOUNT_ID, secret } from './fields.js';

/** Account fields an extra account may leave out to take the top-level value. */
export const INHERITED_CREDENTIALS = ['apiKey', 'clientId', 'clientSecret'] as const;
export type InheritedCredential = (typeof INHERITED_CREDENTIALS)[number];

const ID_FIX = 'each account needs an id of 1 to 32 lowercase letters, digits or dashes, such as "cabin"; the settings page makes one when you add an account';

export function accountEntrySchema() {
  const devices = deviceConfigSchemas();
  return z.object({
    id: z
      .string({ message: `id is missing: ${ID_FIX}` })
      .regex(new RegExp(ACCOUNT_ID_PATTERN), `id must be 1 to 32 lowercase letters, digits or dashes: ${ID_FIX}`)
      .refine((id) => id !== MAIN_ACCOUNT_ID, { message: 'id "main" is reserved for the top-level account: choose another id, such as "cabin"' }),
    name: z.string().trim().optional(),
    refreshToken: z.string().optional(),
    accessToken: z.string().optional(),
    apiKey: secret('apiKey', 'copy the API key issued to you by Lock Access, or leave it out to use the top-level one').optional(),
    clientId: secret('clientId', 'copy the OAuth client id issued to you by Lock Access, or leave it out to use the top-level one').optional(),
    clientSecret: secret('clientSecret', 'copy the OAuth client secret issued to you by Lock Access, or leave it out to use the top-level one').optional(),
    userWebhook: z.boolean({ message: 'userWebhook must be true or false (a switch, without quotes)' }).optional(),
    discoverDevices: z.boolean({ message: 'discoverDevices must be true or false (a switch, without quotes)' }).optional(),
    locks: z.array(devices.lock).default([]),
    doorbells: z.array(devices.doorbell).default([]),
  });
}

export type AccountEntry = z.infer<ReturnType<typeof accountEntrySchema>>;

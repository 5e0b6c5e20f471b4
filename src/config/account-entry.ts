// One entry of `accounts`: an extra account of the service behind the same listener. Fields it
// leaves out take the top-level value; the block's other settings apply to every account.
import { z } from 'zod/v3';

import { deviceConfigSchemas } from './device-configs.js';
import { configMessage, configProblem } from './config-messages.js';
import { ACCOUNT_ID_PATTERN, MAIN_ACCOUNT_ID, secret, switchField } from './fields.js';

/** Account fields an extra account may leave out to take the top-level value. */
export const INHERITED_CREDENTIALS = ['apiKey', 'clientId', 'clientSecret'] as const;
export type InheritedCredential = (typeof INHERITED_CREDENTIALS)[number];

export function accountEntrySchema() {
  const devices = deviceConfigSchemas();
  return z.object({
    id: z
      .string({ message: configProblem('config.account.idMissing') })
      .regex(new RegExp(ACCOUNT_ID_PATTERN), configProblem('config.account.idPattern'))
      .refine((id) => id !== MAIN_ACCOUNT_ID, { message: configProblem('config.account.idReserved') }),
    name: z.string().trim().optional(),
    refreshToken: z.string().optional(),
    accessToken: z.string().optional(),
    apiKey: secret('apiKey', configMessage('config.fix.accountApiKey')).optional(),
    clientId: secret('clientId', configMessage('config.fix.accountClientId')).optional(),
    clientSecret: secret('clientSecret', configMessage('config.fix.accountClientSecret')).optional(),
    userWebhook: switchField('userWebhook').optional(),
    discoverDevices: switchField('discoverDevices').optional(),
    locks: z.array(devices.lock).default([]),
    doorbells: z.array(devices.doorbell).default([]),
  });
}

export type AccountEntry = z.infer<ReturnType<typeof accountEntrySchema>>;

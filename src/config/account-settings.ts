// Each account of the block as one record, the main account first (config order): its id, name,
// credentials (an extra account's left-out ones are the top-level values), seeds and device lists.
import type { z } from 'zod/v3';

import type { AccountEntry } from './account-entry.js';
import type { deviceConfigSchemas } from './device-configs.js';
import { MAIN_ACCOUNT_ID } from './fields.js';

type Devices = ReturnType<typeof deviceConfigSchemas>;

export interface AccountSettings {
  /** `main` for the top-level account fields, else the entry's id. */
  readonly id: string;
  readonly name: string;
  readonly main: boolean;
  readonly apiKey: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly refreshToken: string | undefined;
  readonly accessToken: string | undefined;
  readonly userWebhook: boolean;
  readonly discoverDevices: boolean;
  readonly locks: z.infer<Devices['lock']>[];
  readonly doorbells: z.infer<Devices['doorbell']>[];
}

/** The parts of the block's config the accounts are made of. */
export interface AccountSource {
  readonly apiKey: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly refreshToken?: string | undefined;
  readonly accessToken?: string | undefined;
  readonly userWebhook: boolean;
  readonly discoverDevices: boolean;
  readonly locks: z.infer<Devices['lock']>[];
  readonly doorbells: z.infer<Devices['doorbell']>[];
  readonly accounts: readonly AccountEntry[];
}

/** How log lines name the main account. */
export const MAIN_ACCOUNT_NAME = 'main account';

export function accountSettings(config: AccountSource): AccountSettings[] {
  const main: AccountSettings = {
    id: MAIN_ACCOUNT_ID,
    name: MAIN_ACCOUNT_NAME,
    main: true,
    apiKey: config.apiKey,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    refreshToken: config.refreshToken,
    accessToken: config.accessToken,
    userWebhook: config.userWebhook,
    discoverDevices: config.discoverDevices,
    locks: config.locks,
    doorbells: config.doorbells,
  };
  return [
    main,
    ...config.accounts.map((entry): AccountSettings => ({
      id: entry.id,
      name: entry.name === undefined || entry.name === '' ? entry.id : entry.name,
      main: false,
      apiKey: entry.apiKey ?? config.apiKey,
      clientId: entry.clientId ?? config.clientId,
      clientSecret: entry.clientSecret ?? config.clientSecret,
      refreshToken: entry.refreshToken,
      accessToken: entry.accessToken,
      userWebhook: entry.userWebhook ?? config.userWebhook,
      discoverDevices: entry.discoverDevices ?? config.discoverDevices,
      locks: entry.locks,
      doorbells: entry.doorbells,
    })),
  ];
}

/** "Cabin (cabin)": how a log line names an account, so a user with several knows which one. */
export function accountLabel(account: Pick<AccountSettings, 'id' | 'name' | 'main'>): string {
  return account.main ? 'the main account' : `account ${account.name} (${account.id})`;
}

// Which account the settings page means: unsaved edits from the page win over the platform block
// saved in Homebridge's config.json, and what is still missing is named in the user's words.

import { z } from 'zod/v3';

import { PLATFORM_NAME } from '../settings.js';
import { readHomebridgeConfig } from './homebridge-config.js';
import { serverMessage } from './server-messages.js';
import { UiError } from './ui-error.js';

/** The account fields a request may carry (unsaved edits); blanks fall back to the saved config. */
export const accountInputSchema = z
  .object({
    apiKey: z.string(),
    clientId: z.string(),
    clientSecret: z.string(),
    baseUrl: z.string(),
    authUrl: z.string(),
    publicUrl: z.string(),
    refreshToken: z.string(),
    accessToken: z.string(),
  })
  .partial();
export type AccountInput = z.infer<typeof accountInputSchema>;

/** A complete account: every field the cloud calls need, addresses without a trailing slash. */
export interface Account {
  /** Which account of the block (`main` when absent): it says where the tokens are kept. */
  id?: string;
  apiKey: string;
  clientId: string;
  clientSecret: string;
  baseUrl: string;
  authUrl: string;
  publicUrl?: string;
  refreshToken?: string;
  accessToken?: string;
}

const REQUIRED = ['apiKey', 'clientId', 'clientSecret', 'baseUrl', 'authUrl'] as const;

/** A trimmed string, or undefined for anything blank or not a string (page input is untrusted). */
export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The saved platform block of config.json (or an empty object when there is none or it is unreadable). */
export async function readSavedPlatform(configPath: string | undefined): Promise<Record<string, unknown>> {
  if (!configPath) return {};
  try {
    const raw = (await readHomebridgeConfig(configPath)) as { platforms?: unknown } | null;
    if (typeof raw !== 'object' || raw === null) return {};
    const platforms = Array.isArray(raw.platforms) ? (raw.platforms as unknown[]) : [];
    const block = platforms.find((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && (p as { platform?: unknown }).platform === PLATFORM_NAME);
    return block ?? {};
  } catch {
    return {};
  }
}

/** Unsaved edits (`input`) over the saved block (pure); throws a UiError naming what is missing. */
export function resolveAccount(input: unknown, saved: Record<string, unknown>): Account {
  const parsed = accountInputSchema.safeParse(input ?? {});
  const edits: AccountInput = parsed.success ? parsed.data : {};
  const savedWebhook = (typeof saved.webhook === 'object' && saved.webhook !== null ? saved.webhook : {}) as Record<string, unknown>;
  const pick = (key: keyof AccountInput): string | undefined =>
    nonEmpty(edits[key]) ?? nonEmpty(key === 'publicUrl' ? savedWebhook.publicUrl : saved[key]);
  // The first field missing is named: its own sentence translates whole, and the next is named once it is filled in.
  const missing = REQUIRED.find((key) => pick(key) === undefined);
  if (missing !== undefined) throw new UiError(serverMessage(`server.account.missing.${missing}`));
  for (const key of ['baseUrl', 'authUrl'] as const) {
    const value = pick(key) ?? '';
    if (!/^https?:\/\//i.test(value)) throw new UiError(serverMessage(`server.account.notAddress.${key}`));
  }
  const account: Account = {
    apiKey: pick('apiKey') ?? '',
    clientId: pick('clientId') ?? '',
    clientSecret: pick('clientSecret') ?? '',
    baseUrl: (pick('baseUrl') ?? '').replace(/\/+$/, ''),
    authUrl: (pick('authUrl') ?? '').replace(/\/+$/, ''),
  };
  const publicUrl = pick('publicUrl');
  if (publicUrl) account.publicUrl = publicUrl;
  // Seeds come from the saved config only: the plugin sees the same ones, so neither process re-links with a used seed.
  const refreshToken = nonEmpty(saved.refreshToken);
  const accessToken = nonEmpty(saved.accessToken);
  if (refreshToken) account.refreshToken = refreshToken;
  if (accessToken) account.accessToken = accessToken;
  return account;
}

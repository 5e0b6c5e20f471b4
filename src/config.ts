// The plugin's config: one zod schema gives the typed config and readable errors.
// config.schema.json (the Homebridge UI form) must agree with it; test/config-schema.test.ts checks that.
import { z } from 'zod/v3';

import { checkAccounts, type DisabledAccount } from './config/account-check.js';
import { accountEntrySchema, INHERITED_CREDENTIALS, type InheritedCredential } from './config/account-entry.js';
import { deviceConfigSchemas } from './config/device-configs.js';
import { isEntryList, lookup, problemSentences, pruneEntries } from './config/entry-lists.js';
import { configMessage, configProblem } from './config/config-messages.js';
import { httpUrl, secret } from './config/fields.js';
import { fieldProblem } from './util/field-messages.js';
import { videoSchema } from './video/video-config.js';
import {
  DEFAULT_DELIVERY_CHECK_MINUTES,
  DEFAULT_DISPLAY_NAME,
  DEFAULT_LISTEN_HOST,
  DEFAULT_LISTEN_PORT,
  DEFAULT_TOLERANCE_SECONDS,
  MAX_DELIVERY_CHECK_MINUTES,
  PLATFORM_NAME,
} from './settings.js';

/**
 * Callback paths are appended to the public address, so it may carry no query string or fragment:
 * `https://host/la?key=abc` would register `https://host/la?key=abc/lock/ID`, which reaches the
 * listener as path `/la` with a query, and every callback would get 404.
 */
export const PUBLIC_URL_PATTERN = '^[^?#]*$';

/** A host name such as name.ngrok-free.app; a pasted https:// in front or / behind is taken off. */
export const TUNNEL_DOMAIN_PATTERN = '^((https?://)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+/?)?$';

/**
 * The config's schema, made when the config is checked (at start, and by the settings UI) and
 * dropped after: its zod objects would otherwise stay in memory for as long as Homebridge runs.
 */
export function configSchema() {
  const devices = deviceConfigSchemas();

  /** The built-in tunnel: the plugin forwards its listener through ngrok and uses the tunnel's address. */
  const tunnelSchema = z.object({
    provider: z.literal('ngrok', { errorMap: () => ({ message: configProblem('config.tunnel.provider') }) }).default('ngrok'),
    authtoken: secret('webhook.tunnel.authtoken', configMessage('config.fix.authtoken')),
    /** Without one, ngrok gives a new address at each start (the registrations follow it). */
    domain: z
      .string()
      .trim()
      .regex(new RegExp(TUNNEL_DOMAIN_PATTERN), configProblem('config.tunnel.domain'))
      .transform((value) => value.replace(/^https?:\/\//i, '').replace(/\/+$/, '').toLowerCase())
      .optional(),
  });

  // A port is a name more than an amount: its bounds as written, never grouped (65,535).
  const portRange = fieldProblem('config.field.range', { field: 'webhook.listenPort', min: '1', max: '65535' });
  const checkRange = fieldProblem('config.field.offOrRange', { field: 'webhook.deliveryCheckMinutes', min: 1, max: MAX_DELIVERY_CHECK_MINUTES });
  const webhookSchema = z
    .object({
      publicUrl: httpUrl('webhook.publicUrl', 'https://home.example.net/lock-access', {
        pattern: new RegExp(PUBLIC_URL_PATTERN),
        message: configProblem('config.publicUrl.query'),
      })
        .superRefine((value, context) => {
          const problem = publicPathProblem(value);
          if (problem !== undefined) context.addIssue({ code: z.ZodIssueCode.custom, message: problem });
        })
        .optional(),
      listenHost: z.string().min(1).default(DEFAULT_LISTEN_HOST),
      listenPort: z.number({ message: fieldProblem('config.field.number', { field: 'webhook.listenPort' }) }).int().min(1, portRange).max(65535, portRange).default(DEFAULT_LISTEN_PORT),
      toleranceSeconds: z
        .number()
        .int()
        .min(1, fieldProblem('config.field.atLeast', { field: 'webhook.toleranceSeconds', min: 1 }))
        .max(3600, fieldProblem('config.field.atMost', { field: 'webhook.toleranceSeconds', max: 3600 }))
        .default(DEFAULT_TOLERANCE_SECONDS),
      tlsCertFile: z.string().optional(),
      tlsKeyFile: z.string().optional(),
      tunnel: tunnelSchema.optional(),
      /** After this many minutes without a verified callback the plugin checks that events still arrive (0: off). */
      deliveryCheckMinutes: z
        .number({ message: fieldProblem('config.field.minutes', { field: 'webhook.deliveryCheckMinutes' }) })
        .int(fieldProblem('config.field.wholeMinutes', { field: 'webhook.deliveryCheckMinutes' }))
        .min(0, checkRange)
        .max(MAX_DELIVERY_CHECK_MINUTES, checkRange)
        .default(DEFAULT_DELIVERY_CHECK_MINUTES),
      /** The "Lock Access Events Stopped" contact sensor in HomeKit. */
      deliverySensor: z.boolean().default(true),
    })
    .superRefine((webhook, context) => {
      if (webhook.publicUrl === undefined && webhook.tunnel === undefined) {
        context.addIssue({ code: z.ZodIssueCode.custom, path: ['publicUrl'], message: configProblem('config.publicUrl.missing') });
      }
    });

  const configSchema = z.object({
    platform: z.literal(PLATFORM_NAME),
    name: z.string().default(DEFAULT_DISPLAY_NAME),
    apiKey: secret('apiKey', configMessage('config.fix.apiKey')),
    clientId: secret('clientId', configMessage('config.fix.clientId')),
    clientSecret: secret('clientSecret', configMessage('config.fix.clientSecret')),
    refreshToken: z.string().optional(),
    accessToken: z.string().optional(),
    baseUrl: httpUrl('baseUrl', 'https://api.example.com'),
    authUrl: httpUrl('authUrl', 'https://auth.example.com'),
    webhook: webhookSchema,
    locks: z.array(devices.lock).default([]),
    doorbells: z.array(devices.doorbell).default([]),
    people: z.array(devices.person).default([]),
    video: videoSchema.default({}),
    userWebhook: z.boolean().default(true),
    discoverDevices: z.boolean().default(true),
    refreshStateOnStart: z.boolean().default(true),
    /** Publish Matter endpoints too when the bridge runs Matter (Homebridge 2). */
    matter: z.boolean().default(true),
    /** Extra accounts of the service behind the same listener; checked entry by entry (config/account-check.ts). */
    accounts: z.array(accountEntrySchema()).default([]),
  });
  return configSchema;
}

export type LockAccessConfig = z.infer<ReturnType<typeof configSchema>>;
export type LockConfig = LockAccessConfig['locks'][number];
export type DoorbellConfig = LockAccessConfig['doorbells'][number];
export type WebhookConfig = LockAccessConfig['webhook'];
export type TunnelConfig = NonNullable<WebhookConfig['tunnel']>;
export type { AccountEntry } from './config/account-entry.js';
export type { DisabledAccount } from './config/account-check.js';
export { ACCOUNT_ID_PATTERN, MAIN_ACCOUNT_ID } from './config/fields.js';

export type ConfigCheck =
  /**
   * `disabled`: one sentence per device, person or account entry left out for a mistake inside it;
   * `disabledAccounts`: the entries of `accounts` that do not run, and why.
   */
  | {
    ok: true; config: LockAccessConfig; warnings: string[]; disabled: string[]; disabledAccounts: DisabledAccount[];
    /** The top-level account fields have a mistake: the main account is disabled, the extra accounts with their own credentials run. */
    mainDisabled?: MainDisabled;
  }
  | { ok: false; missing: string[]; problems: string[] };

/** Which top-level credentials are broken (field names, for the settings page) and what to fix (the log's words). */
export interface MainDisabled {
  fields: string[];
  text: string;
}

/** Fields a user must fill before the plugin does anything (the public address: unless a tunnel gives one). */
export const REQUIRED_FIELDS = ['apiKey', 'clientId', 'clientSecret', 'baseUrl', 'authUrl', 'webhook.publicUrl'] as const;

/** The required fields `raw` leaves blank: webhook.publicUrl is not needed with a tunnel, whose authtoken then is. */
export function missingFields(raw: unknown): string[] {
  const blank = (field: string) => {
    const value = lookup(raw, field);
    return value === undefined || value === null || value === '';
  };
  const tunnel = lookup(raw, 'webhook.tunnel');
  const hasTunnel = tunnel !== undefined && tunnel !== null;
  const fields: string[] = REQUIRED_FIELDS.filter((field) => !(hasTunnel && field === 'webhook.publicUrl'));
  if (hasTunnel) fields.push('webhook.tunnel.authtoken');
  return fields.filter(blank);
}

/**
 * Parses the raw platform config. Never throws. A mistake in the account or webhook settings
 * yields the missing field names and one readable sentence per problem, so the platform can log
 * what to fix and stay idle. A mistake inside one lock, doorbell or person entry leaves that entry
 * out, with a sentence naming the entry, the field and the fix, and everything else runs; a refused
 * device entry still holds its device back (see refusedEntry).
 */
export function checkConfig(raw: unknown): ConfigCheck {
  const missing = missingFields(raw);
  // Each extra account is checked on its own below: a mistake in one never idles the others.
  const rawAccounts = lookup(raw, 'accounts');
  const record = raw !== null && typeof raw === 'object' ? { ...(raw as Record<string, unknown>), accounts: [] } : raw;
  const block = parseBlock(record, missing);
  if (!block.ok) {
    // A mistake in the top-level account fields alone disables the main account (and the entries
    // that take the broken field); the extra accounts with credentials of their own run.
    const broken = brokenCredentials(block, missing);
    if (broken === undefined || rawAccounts === undefined) return block;
    const stand = parseBlock({ ...(record as Record<string, unknown>), ...Object.fromEntries([...broken].map((field) => [field, BROKEN_PLACEHOLDER])) }, []);
    if (!stand.ok) return block;
    const accounts = checkAccounts(rawAccounts, { refreshToken: stand.config.refreshToken, broken });
    if (accounts.accounts.length === 0) return block;
    const text = [...(block.missing.length > 0 ? [`missing: ${block.missing.join(', ')}`] : []), ...block.problems].join('; ');
    const mainDisabled: MainDisabled = { fields: [...broken], text };
    return finish(stand.config, accounts, stand.disabled, mainDisabled);
  }
  const accounts = checkAccounts(rawAccounts, { refreshToken: block.config.refreshToken, broken: new Set() });
  return finish(block.config, accounts, block.disabled, undefined);
}

/** Stands in for a broken top-level credential while the main account is disabled: it is never sent. */
const BROKEN_PLACEHOLDER = 'broken';

/** The block without its accounts, parsed: a mistake in a device or person entry leaves that entry out. */
function parseBlock(record: unknown, missing: readonly string[]): { ok: true; config: LockAccessConfig; disabled: string[] } | { ok: false; missing: string[]; problems: string[]; issues: z.ZodIssue[] } {
  const isMissing = (where: string) => missing.some((field) => field === where || field.startsWith(`${where}.`));
  const schema = configSchema();
  let parsed = schema.safeParse(record);
  const disabled: string[] = [];
  if (!parsed.success) {
    // Entry mistakes alone: parse again without the entries (or lists) that hold them.
    const inEntry = (issue: z.ZodIssue) => isEntryList(issue.path[0]);
    if (missing.length > 0 || !parsed.error.issues.every(inEntry)) {
      const issues = parsed.error.issues.filter((issue) => !inEntry(issue));
      return { ok: false, missing: [...missing], problems: problemSentences(issues, isMissing), issues };
    }
    const { pruned, disabled: refused } = pruneEntries(record as Record<string, unknown>, parsed.error.issues);
    disabled.push(...refused);
    parsed = schema.safeParse(pruned);
    if (!parsed.success) return { ok: false, missing: [...missing], problems: problemSentences(parsed.error.issues, isMissing), issues: parsed.error.issues };
  }
  return { ok: true, config: parsed.data, disabled };
}

/** The top-level credentials a failed parse found broken, when they are its only mistakes. */
function brokenCredentials(failed: { missing: string[]; issues: z.ZodIssue[] }, missing: readonly string[]): Set<InheritedCredential> | undefined {
  const credential = (field: unknown): field is InheritedCredential => INHERITED_CREDENTIALS.some((name) => name === field);
  if (!missing.every(credential)) return undefined;
  if (!failed.issues.every((issue) => issue.path.length === 1 && credential(issue.path[0]))) return undefined;
  const broken = new Set<InheritedCredential>([...missing.filter(credential), ...failed.issues.map((issue) => issue.path[0]).filter(credential)]);
  return broken.size > 0 ? broken : undefined;
}

function finish(config: LockAccessConfig, accounts: ReturnType<typeof checkAccounts>, disabled: string[], mainDisabled: MainDisabled | undefined): ConfigCheck {
  config.accounts = accounts.accounts;
  disabled.push(...accounts.problems);
  const warnings: string[] = [];
  const { publicUrl, tunnel } = config.webhook;
  if (publicUrl !== undefined && tunnel !== undefined) {
    warnings.push('webhook.publicUrl and webhook.tunnel are both set: the ngrok tunnel\'s address is used (with the path of webhook.publicUrl) and webhook.publicUrl is not registered. Remove one of them in the plugin settings.');
  } else if (publicUrl !== undefined && new URL(publicUrl).protocol === 'http:') {
    warnings.push('webhook.publicUrl uses http: the service needs an https address; use http only for local testing.');
  }
  if (Boolean(config.webhook.tlsCertFile) !== Boolean(config.webhook.tlsKeyFile)) {
    warnings.push('webhook.tlsCertFile and webhook.tlsKeyFile must be set together; the listener uses plain http until both are set.');
  }
  if (peopleOf(config).length < config.people.length) {
    warnings.push('people lists the same userId more than once; the first entry is used.');
  }
  return { ok: true, config, warnings, disabled, disabledAccounts: accounts.disabled, ...(mainDisabled === undefined ? {} : { mainDisabled }) };
}

/** The people of the config: the first entry per userId, each with a name (the userId when none is given). */
export function peopleOf(config: Pick<LockAccessConfig, 'people'>): { userId: string; name: string }[] {
  const seen = new Set<string>();
  const result: { userId: string; name: string }[] = [];
  for (const person of config.people) {
    if (seen.has(person.userId)) continue;
    seen.add(person.userId);
    result.push({ userId: person.userId, name: person.name === undefined || person.name === '' ? person.userId : person.name });
  }
  return result;
}

/** An escape of a character the path cannot hold as itself: `/`, `?`, `#`, `%`. */
const ENCODED_DELIMITER = /%(2f|3f|23|25)/i;

/**
 * What is wrong with the path of a webhook.publicUrl, if anything. The listener routes under the
 * decoded path (the framework decodes each request's path before matching it), so an escaped `/`,
 * `?`, `#` or `%` would route as another path than the one the service calls, and a `%` that starts
 * no escape cannot be decoded at all.
 */
function publicPathProblem(publicUrl: string): string | undefined {
  let path: string;
  try {
    path = new URL(publicUrl).pathname;
  } catch {
    return undefined;
  }
  const escape = ENCODED_DELIMITER.exec(path);
  if (escape !== null) {
    return configProblem('config.publicUrl.encodedChars', { chars: escape[0] });
  }
  try {
    decodeURIComponent(path);
  } catch {
    return configProblem('config.publicUrl.badPercent');
  }
  return undefined;
}

/** The path of webhook.publicUrl as the service calls it (percent-encoded), without a trailing slash. */
export function publicPathPrefix(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/**
 * The path prefix the listener routes under: the public path decoded, as the framework decodes each
 * request's path before it matches a route (`/Haust%C3%BCr` routes as `/Haustür`).
 */
export function listenerPrefix(publicUrl: string): string {
  return decodeURIComponent(publicPathPrefix(publicUrl));
}

/** The listener's route prefix for a webhook config: none when a tunnel stands alone (the tunnel is the listener's only). */
export function webhookPrefix(webhook: Pick<WebhookConfig, 'publicUrl'>): string {
  return webhook.publicUrl === undefined ? '' : listenerPrefix(webhook.publicUrl);
}

/** The same prefix percent-encoded, for an address (the tunnel's, the listener's own). */
export function webhookPathPrefix(webhook: Pick<WebhookConfig, 'publicUrl'>): string {
  return webhook.publicUrl === undefined ? '' : publicPathPrefix(webhook.publicUrl);
}

/** Characters an address cannot carry as they are: anything outside printable ASCII, and those a path escapes. */
const NEEDS_ENCODING = /[^\x21-\x7e]|["<>`{}]/;

/**
 * The public address as registered: as configured when it needs no encoding (so an upgrade registers
 * the same address), else percent-encoded (`/Haustür` as `/Haust%C3%BCr`, a space as `%20`).
 */
export function registeredBase(publicUrl: string): string {
  const text = NEEDS_ENCODING.test(publicUrl) ? new URL(publicUrl).href : publicUrl;
  return text.replace(/\/+$/, '');
}

/** Callback URLs registered with the service: the public address plus /lock/ID, /doorbell/ID, /user. */
export function callbackUrls(publicUrl: string) {
  const base = registeredBase(publicUrl);
  return {
    lock: (lockId: string) => `${base}/lock/${encodeURIComponent(lockId)}`,
    doorbell: (doorbellId: string) => `${base}/doorbell/${encodeURIComponent(doorbellId)}`,
    user: () => `${base}/user`,
    health: () => `${base}/health`,
  };
}

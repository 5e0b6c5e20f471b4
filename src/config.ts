// The plugin's config: one zod schema gives the typed config and readable errors.
// config.schema.json (the Homebridge UI form) must agree with it; test/config-schema.test.ts checks that.
import { z } from 'zod';

import {
  DEFAULT_DISPLAY_NAME,
  DEFAULT_LISTEN_HOST,
  DEFAULT_LISTEN_PORT,
  DEFAULT_MOTION_TIMEOUT_SECONDS,
  DEFAULT_TOLERANCE_SECONDS,
  PLATFORM_NAME,
} from './settings.js';

const secret = (field: string, where: string) =>
  z
    .string({ error: `${field} is missing: ${where}` })
    .refine((value) => value.trim() === value, { message: `${field} has spaces or line breaks at its start or end: paste it again without them` })
    .refine((value) => value.length > 0, { message: `${field} is empty: ${where}` });

const httpUrl = (field: string, example: string) =>
  z
    .string({ error: `${field} is missing: enter an address such as ${example}` })
    .refine((value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'https:' || url.protocol === 'http:';
      } catch {
        return false;
      }
    }, { message: `${field} must be a full http(s) address such as ${example}` });

export const lockEntrySchema = z.object({
  id: z.string({ error: 'each lock needs an id: copy it from the Lock Access app or the plugin settings' }).min(1, 'a lock id is empty'),
  name: z.string().optional(),
  doorSensor: z.boolean().default(false),
  /** For a lock already in HomeKit on its own: only its door sensor (design 7b). Off when absent. */
  doorSensorOnly: z.boolean().optional(),
  hidden: z.boolean().default(false),
});

/** Someone whose unlocks and locks become an automation trigger on every lock (design 7b). */
export const personEntrySchema = z.object({
  userId: z.string({ error: 'each person needs a userId: pick people in the plugin settings, which fill it in' }).trim().min(1, 'a person\'s userId is empty'),
  /** Shown in Apple Home; the userId stands in when it is left empty. */
  name: z.string().trim().optional(),
});

export const doorbellEntrySchema = z.object({
  id: z.string({ error: 'each doorbell needs an id: copy it from the Lock Access app or the plugin settings' }).min(1, 'a doorbell id is empty'),
  name: z.string().optional(),
  motionTimeoutSeconds: z.number().int().min(1, 'motionTimeoutSeconds must be at least 1').max(3600, 'motionTimeoutSeconds must be at most 3600').default(DEFAULT_MOTION_TIMEOUT_SECONDS),
  hidden: z.boolean().default(false),
});

export const webhookSchema = z.object({
  publicUrl: httpUrl('webhook.publicUrl', 'https://home.example.net/lock-access'),
  listenHost: z.string().min(1).default(DEFAULT_LISTEN_HOST),
  listenPort: z.number({ error: 'webhook.listenPort must be a number' }).int().min(1, 'webhook.listenPort must be 1 to 65535').max(65535, 'webhook.listenPort must be 1 to 65535').default(DEFAULT_LISTEN_PORT),
  toleranceSeconds: z.number().int().min(1, 'webhook.toleranceSeconds must be at least 1').max(3600, 'webhook.toleranceSeconds must be at most 3600').default(DEFAULT_TOLERANCE_SECONDS),
  tlsCertFile: z.string().optional(),
  tlsKeyFile: z.string().optional(),
});

export const configSchema = z.object({
  platform: z.literal(PLATFORM_NAME),
  name: z.string().default(DEFAULT_DISPLAY_NAME),
  apiKey: secret('apiKey', 'copy the API key issued to you by Lock Access into the plugin settings'),
  clientId: secret('clientId', 'copy the OAuth client id issued to you by Lock Access into the plugin settings'),
  clientSecret: secret('clientSecret', 'copy the OAuth client secret issued to you by Lock Access into the plugin settings'),
  refreshToken: z.string().optional(),
  accessToken: z.string().optional(),
  baseUrl: httpUrl('baseUrl', 'https://api.example.com'),
  authUrl: httpUrl('authUrl', 'https://auth.example.com'),
  webhook: webhookSchema,
  locks: z.array(lockEntrySchema).default([]),
  doorbells: z.array(doorbellEntrySchema).default([]),
  people: z.array(personEntrySchema).default([]),
  userWebhook: z.boolean().default(true),
  discoverDevices: z.boolean().default(true),
  refreshStateOnStart: z.boolean().default(true),
  /** Design 7c: publish Matter endpoints too when the bridge runs Matter (Homebridge 2). */
  matter: z.boolean().default(true),
});

export type LockAccessConfig = z.infer<typeof configSchema>;
export type LockEntry = z.infer<typeof lockEntrySchema>;
export type DoorbellEntry = z.infer<typeof doorbellEntrySchema>;
export type WebhookConfig = z.infer<typeof webhookSchema>;

export type ConfigCheck =
  | { ok: true; config: LockAccessConfig; warnings: string[] }
  | { ok: false; missing: string[]; problems: string[] };

/** Fields a user must fill before the plugin does anything. */
export const REQUIRED_FIELDS = ['apiKey', 'clientId', 'clientSecret', 'baseUrl', 'authUrl', 'webhook.publicUrl'] as const;

function pathOf(issuePath: readonly PropertyKey[]): string {
  return issuePath.map((part) => (typeof part === 'number' ? `[${part}]` : String(part))).join('.').replace(/\.\[/g, '[');
}

function lookup(raw: unknown, path: string): unknown {
  let value: unknown = raw;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Parses the raw platform config. Never throws: a broken config yields the missing field names and
 * one readable sentence per problem, so the platform can log what to fix and stay idle.
 */
export function checkConfig(raw: unknown): ConfigCheck {
  const missing = REQUIRED_FIELDS.filter((field) => {
    const value = lookup(raw, field);
    return value === undefined || value === null || value === '';
  });
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .filter((issue) => {
        // A missing required field (or its missing parent object) is already named in `missing`.
        const where = pathOf(issue.path);
        return !missing.some((field) => field === where || field.startsWith(`${where}.`));
      })
      .map((issue) => {
        const where = pathOf(issue.path);
        return issue.message.startsWith(where.split('[')[0] ?? '') || where === '' ? issue.message : `${where}: ${issue.message}`;
      });
    return { ok: false, missing: [...missing], problems };
  }
  const warnings: string[] = [];
  if (new URL(parsed.data.webhook.publicUrl).protocol === 'http:') {
    warnings.push('webhook.publicUrl uses http: the service needs an https address; use http only for local testing.');
  }
  if (Boolean(parsed.data.webhook.tlsCertFile) !== Boolean(parsed.data.webhook.tlsKeyFile)) {
    warnings.push('webhook.tlsCertFile and webhook.tlsKeyFile must be set together; the listener uses plain http until both are set.');
  }
  if (peopleOf(parsed.data).length < parsed.data.people.length) {
    warnings.push('people lists the same userId more than once; the first entry is used.');
  }
  return { ok: true, config: parsed.data, warnings };
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

/** The path prefix the listener serves under: the path of webhook.publicUrl without a trailing slash. */
export function listenerPrefix(publicUrl: string): string {
  const path = new URL(publicUrl).pathname.replace(/\/+$/, '');
  return path === '/' ? '' : path;
}

/** Callback URLs registered with the service (design section 3). */
export function callbackUrls(publicUrl: string) {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    lock: (lockId: string) => `${base}/lock/${encodeURIComponent(lockId)}`,
    doorbell: (doorbellId: string) => `${base}/doorbell/${encodeURIComponent(doorbellId)}`,
    user: () => `${base}/user`,
    health: () => `${base}/health`,
  };
}

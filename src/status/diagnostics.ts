// The diagnostics file a user attaches to a bug report: versions, the config with every secret
// taken out (the ngrok authtoken too), link state and token ages (never a token), the
// registrations, the public address in use (or the tunnel's state), whether events arrive, the last
// self-checks and test events, rejection counts and the clock offset, listener counters and the
// last events. Pure: the caller reads the files; this shapes and cleans what they hold.
import { redactLinksIn, withoutCredentials, withoutSecretParts } from '../util/redact-url.js';

export const DIAGNOSTICS_EVENTS = 200;
const REDACTED = '[redacted]';

/** Config keys that hold a secret, and any key named like one. */
const SECRET_KEY = /(api[-_]?key|secret|token|password|passwd|credential|^pin$|^code$|authorization|cookie)/i;
const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[a-z]{2,}/gi;
/** Seven or more digits, maybe with +, spaces, dots, dashes or brackets between: a phone number. */
const PHONE = /\+?\d[\d\s().-]{5,}\d/g;
/** A keypad code written out in a sentence ("PIN 1234", "code: 998877"). */
const PIN_IN_TEXT = /\b(pin|code|passcode)(\s*(?:is|:|=|#)?\s*)\d{3,12}\b/gi;

export interface DiagnosticsInput {
  versions: { plugin: string; homebridge?: string; node: string };
  generatedAt: number;
  /** The platform block as saved in config.json (secrets included: they are taken out here). */
  config: Record<string, unknown> | undefined;
  /** tokens.json as stored (its tokens are never copied, only their ages and states). */
  tokens: Record<string, unknown> | undefined;
  registrations: unknown;
  status: unknown;
  support: unknown;
  /** Newest first. */
  events: readonly unknown[];
  /** Every secret value known (API key, client secret, tokens, webhook token): none survives anywhere. */
  secrets: readonly string[];
}

/** A copy of `value` with secret-named keys, known secret values, e-mails, phones and PIN digits taken out. */
export function scrub(value: unknown, secrets: readonly string[], key = ''): unknown {
  if (typeof value === 'string') {
    if (SECRET_KEY.test(key) && value !== '') return REDACTED;
    let text = value;
    for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join(REDACTED);
    // Any address may be a signed link (motion stills are): its user info and query string go
    // first, before the e-mail rule could take "password@host" for an address.
    text = /url$/i.test(key) ? withoutSecretParts(text) : redactLinksIn(text);
    text = text.replace(EMAIL, '[e-mail]').replace(PIN_IN_TEXT, (_m, word: string, sep: string) => `${word}${sep}[digits]`);
    // Ids and times are digits by nature; words meant for people are not.
    if (!/(id|ID|Id|url|Url|URL|at|At|version|Version)$/.test(key)) text = text.replace(PHONE, '[phone]');
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (/^pin$/i.test(k)) continue;
      out[k] = SECRET_KEY.test(k) && typeof v === 'string' && v !== '' ? REDACTED : scrub(v, secrets, k);
    }
    return out;
  }
  return value;
}

const age = (now: number, at: unknown) => (typeof at === 'number' ? Math.round((now - at) / 1000) : undefined);

/** What the token file says about the link, without a token: states and ages in seconds. */
function linkSummary(tokens: Record<string, unknown> | undefined, now: number): Record<string, unknown> {
  if (tokens === undefined) return { state: 'never linked' };
  return {
    state: tokens.state,
    message: tokens.message,
    settingsProblem: tokens.settingsProblem,
    hasRefreshToken: typeof tokens.refreshToken === 'string',
    refreshTokenLost: tokens.refreshTokenLost,
    hasAccessToken: typeof tokens.accessToken === 'string',
    accessTokenAgeSeconds: age(now, tokens.accessTokenIssuedAt),
    accessTokenExpiresInSeconds: typeof tokens.accessTokenExpiresAt === 'number' ? Math.round((tokens.accessTokenExpiresAt - now) / 1000) : undefined,
    lastRefreshAgeSeconds: age(now, tokens.lastRefreshAt),
    lastKeepAliveAgeSeconds: age(now, tokens.lastKeepAliveAt),
    linkedAgeSeconds: age(now, tokens.linkedAt),
    rotations: tokens.rotations,
    unlinks: tokens.unlinks,
  };
}

/** The config with its secrets marked as set or not, never shown. */
function configSummary(config: Record<string, unknown> | undefined): unknown {
  if (config === undefined) return undefined;
  const webhook = config.webhook as Record<string, unknown> | undefined;
  const copy: Record<string, unknown> = { ...config };
  if (webhook !== undefined && typeof webhook.publicUrl === 'string') copy.webhook = { ...webhook, publicUrl: withoutCredentials(webhook.publicUrl) };
  return copy;
}

/** "main account", "Cabin (cabin)": each account whose delivery watch finds events not arriving. */
function notArriving(status: Record<string, unknown>): string[] {
  const stopped = (delivery: unknown) => (delivery as { state?: unknown } | undefined)?.state === 'notArriving';
  const extras = Object.entries((status.accounts ?? {}) as Record<string, { name?: unknown; delivery?: unknown }>)
    .filter(([, account]) => stopped(account.delivery))
    .map(([id, account]) => `${typeof account.name === 'string' ? account.name : id} (${id})`);
  return [...(stopped(status.delivery) ? ['main account'] : []), ...extras];
}

export function buildDiagnostics(input: DiagnosticsInput): Record<string, unknown> {
  const status = (input.status ?? {}) as Record<string, unknown>;
  const receiver = (status.receiver ?? {}) as Record<string, unknown>;
  const report = {
    about: 'Lock Access diagnostics: attach this file to a bug report. It holds no key, secret, token, keypad code, e-mail address or phone number.',
    generatedAt: new Date(input.generatedAt).toISOString(),
    versions: input.versions,
    config: configSummary(input.config),
    link: linkSummary(input.tokens, input.generatedAt),
    registrations: input.registrations,
    selfCheck: status.selfCheck,
    /** Where the service calls the plugin: the configured address or the built-in tunnel and its state. */
    publicAddress: status.publicAddress,
    delivery: status.delivery ?? 'off (webhook.deliveryCheckMinutes is 0) or not started yet',
    /** The extra accounts: name, link and delivery each (the main account's are the fields above). */
    accounts: status.accounts,
    /** The accounts whose events are not arriving, by name and id. */
    eventsNotArriving: notArriving(status),
    testEvents: (input.support as { testEvents?: unknown } | undefined)?.testEvents ?? [],
    listener: {
      listening: receiver.listening,
      listenAddress: receiver.listenAddress,
      accepted: receiver.accepted,
      duplicates: receiver.duplicates,
      rejected: receiver.rejected,
      lastRejection: receiver.lastRejection,
      clockOffsetMs: (receiver.lastRejection as { clockOffsetMs?: number } | undefined)?.clockOffsetMs,
      lastUnknownPath: receiver.lastUnknownPath,
      lastCallbacks: receiver.lastCallbacks,
    },
    devices: status.devices,
    pluginStatusUpdatedAt: status.updatedAt,
    events: input.events.slice(0, DIAGNOSTICS_EVENTS),
  };
  return scrub(report, input.secrets) as Record<string, unknown>;
}

// Gathers what the diagnostics file holds from the files the plugin writes under lock-access/ and
// the saved config, then hands it to the pure builder, which takes every secret out. Every secret
// value known here (keys, tokens, the webhook token) is named to the builder, so none survives
// even where it would appear in an unexpected place.
import { LEDGER_FILE } from '../cloud/registrations/registration-ledger.js';
import { WEBHOOK_SECRET_FILE } from '../cloud/registrations/webhook-secret.js';
import { EVENT_LOG_FILE } from '../status/event-log.js';
import { buildDiagnostics } from '../status/diagnostics.js';
import { STATUS_FILE } from '../status/status.js';
import { SUPPORT_FILE } from '../status/support-record.js';
import type { Storage } from '../storage.js';
import { TOKENS_FILE } from '../storage/token-file.js';
import { pluginVersion } from '../util/plugin-version.js';

async function readJson(storage: Storage, name: string): Promise<unknown> {
  try {
    const text = await storage.readText(name);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** Every string value in `value` whose key names a secret: what must not survive anywhere. */
function secretsIn(value: unknown, out: string[] = [], key = ''): string[] {
  if (typeof value === 'string') {
    if (/(key|secret|token|password)/i.test(key) && value.length >= 4) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) secretsIn(item, out, key);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) secretsIn(v, out, k);
  }
  return out;
}

export async function collectDiagnostics(storage: Storage, config: Record<string, unknown> | undefined, now: number): Promise<Record<string, unknown>> {
  const [status, tokens, secret, ledger, support, events] = await Promise.all([
    readJson(storage, STATUS_FILE),
    readJson(storage, TOKENS_FILE),
    readJson(storage, WEBHOOK_SECRET_FILE),
    readJson(storage, LEDGER_FILE),
    readJson(storage, SUPPORT_FILE),
    readJson(storage, EVENT_LOG_FILE),
  ]);
  const versions = (status as { versions?: { plugin: string; homebridge?: string; node: string } } | undefined)?.versions;
  const entries = (events as { entries?: unknown[] } | undefined)?.entries ?? [];
  const publicUrl = (config?.webhook as { publicUrl?: unknown } | undefined)?.publicUrl;
  const credentials = typeof publicUrl === 'string' ? (() => {
    try {
      const url = new URL(publicUrl);
      return [url.password, url.username].filter((part) => part.length >= 4);
    } catch {
      return [];
    }
  })() : [];
  return buildDiagnostics({
    versions: { plugin: versions?.plugin ?? pluginVersion(), node: versions?.node ?? process.version, ...(versions?.homebridge === undefined ? {} : { homebridge: versions.homebridge }) },
    generatedAt: now,
    config,
    tokens: tokens as Record<string, unknown> | undefined,
    registrations: (ledger as { entries?: unknown } | undefined)?.entries ?? [],
    status,
    support,
    // Newest first.
    events: [...entries].reverse(),
    secrets: [...secretsIn(config), ...secretsIn(tokens), ...secretsIn(secret), ...credentials],
  });
}

// Shared set-up for the receiver tests: a real DedupeStore in a temp folder, a capturing logger and
// sink, and a signer that behaves like the service.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DedupeStore } from '../../src/callbacks/dedupe.js';
import type { ReceiverOptions } from '../../src/callbacks/listener-options.js';
import type { CallbackContext } from '../../src/callbacks/receiver.js';
import { signatureHeader } from '../../src/callbacks/signature.js';
import type { WebhookConfig } from '../../src/config.js';
import type { DeviceEvent } from '../../src/model/events.js';
import { CALLBACK_TOKEN_HEADER } from '../../src/settings.js';
import { Storage } from '../../src/storage.js';
import type { Logger } from '../../src/util/logger.js';

export const API_KEY = 'api-key-for-tests-4f1c';
export const TOKEN = 'a'.repeat(20) + 'callback-token';
export const NOW = 1_767_225_600_000;

export interface Harness {
  options: ReceiverOptions;
  sunk: { events: DeviceEvent[]; context: CallbackContext }[];
  lines: string[];
  clock: { now: number };
  dir: string;
  cleanup(): Promise<void>;
}

/** A logger that writes each line as "level message" into `lines`. */
export function recordingLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (m) => lines.push(`info ${m}`),
      warn: (m) => lines.push(`warn ${m}`),
      error: (m) => lines.push(`error ${m}`),
      debug: (m) => lines.push(`debug ${m}`),
    },
  };
}

export async function makeHarness(overrides: Partial<ReceiverOptions> = {}, webhook: Partial<WebhookConfig> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'lock-access-recv-'));
  const clock = { now: NOW };
  const dedupe = await DedupeStore.open({ storage: new Storage(dir), now: () => clock.now, debounceMs: 10 });
  const sunk: Harness['sunk'] = [];
  const { log, lines } = recordingLog();
  const options: ReceiverOptions = {
    webhook: { publicUrl: 'https://home.example.net/lock-access', listenHost: '127.0.0.1', listenPort: 0, toleranceSeconds: 300, deliveryCheckMinutes: 360, deliverySensor: true, ...webhook },
    apiKey: API_KEY,
    callbackToken: () => TOKEN,
    instanceNonce: 'nonce-123',
    dedupe,
    log,
    onEvents: (events, context) => sunk.push({ events, context }),
    now: () => clock.now,
    ...overrides,
  };
  return {
    options, sunk, lines, clock, dir,
    async cleanup() {
      await dedupe.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface SignedRequest {
  body: Buffer;
  headers: Record<string, string>;
}

/** Signs like the service: t in seconds, hex v, the custom header unless told otherwise. */
export function signed(body: unknown, options: { t?: number | string; token?: string | null; contentType?: string | null; encoding?: 'hex' | 'base64' } = {}): SignedRequest {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const t = options.t ?? Math.floor(NOW / 1000);
  const headers: Record<string, string> = { 'x-svc-signature': signatureHeader(API_KEY, t, raw, options.encoding) };
  if (options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
  if (options.token !== null) headers[CALLBACK_TOKEN_HEADER] = options.token ?? TOKEN;
  return { body: raw, headers };
}

/** Waits until the sink calls scheduled after the replies have run. */
export function afterReplies(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

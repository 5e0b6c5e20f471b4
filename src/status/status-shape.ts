// The shape of the status file (`status.json`) the settings UI reads, as one zod schema; the types
// of status.ts are inferred from it. Only states, ids, names, URLs without credentials and counts:
// never a secret.
import { z } from 'zod/v3';

import { uiMessageSchema } from '../util/ui-message.js';
import { accountsStatusSchema } from './account-status.js';
import { deliveryStatusSchema } from './delivery-shape.js';

/**
 * The file's version. 2: every sentence for the page is a message, `{code, params, text}`; files of
 * version 1 held sentences and are read through upgradeStatus() (status-upgrade.ts).
 */
export const STATUS_VERSION = 2;

/**
 * The file's schema, made when the file is read or written and dropped after: it is some 140 zod
 * objects, and the plugin writes the file only now and then, so keeping them would cost memory all
 * the time for a check made seconds apart at most.
 */
export function statusSchema() {
  const message = uiMessageSchema();
  const linkStatusSchema = z.object({
    /** 'checkSettings': the token service refused the client id or secret; the refresh token is kept. */
    state: z.enum(['notConfigured', 'unlinked', 'linked', 'reauthorizationNeeded', 'checkSettings']),
    /** What it means, including what to do when something is wrong. */
    message,
    since: z.number().optional(),
  });

  const selfCheckSchema = z.object({
    state: z.enum(['pending', 'ok', 'failed']),
    /** The public health URL that was checked. */
    url: z.string().optional(),
    message,
    checkedAt: z.number().optional(),
    /** When a check last passed (kept through later failures). */
    lastPassedAt: z.number().optional(),
    /** When the next check runs. */
    nextAt: z.number().optional(),
    /** The last few results, newest first. */
    history: z.array(z.object({ at: z.number(), ok: z.boolean(), message })).optional(),
  });

  /** Whether events arrive (the delivery watch); absent while the watch is off. */
  const deliverySchema = deliveryStatusSchema();

  const registrationStatusSchema = z.object({
    kind: z.enum(['lock', 'doorbell', 'user']),
    /** Device id; empty for the user registration. */
    id: z.string(),
    name: z.string().optional(),
    /** The callback URL registered with the service. */
    url: z.string().optional(),
    /** Same words as WebhookRegistrar.status(), so its list can be written as it is. */
    state: z.enum(['pending', 'registered', 'failed', 'deleting']),
    /** ISO time of the last confirmation by the service. */
    lastSuccessAt: z.string().optional(),
    lastError: message.optional(),
  });

  const lastCallbackSchema = z.object({
    deviceKind: z.enum(['lock', 'doorbell', 'user']),
    deviceId: z.string(),
    at: z.number(),
    /** What it was, e.g. "lockState". */
    kind: z.string().optional(),
  });

  const receiverStatusSchema = z.object({
    listening: z.boolean(),
    /** Where the listener is bound, e.g. "0.0.0.0:8582". */
    listenAddress: z.string().optional(),
    accepted: z.number().int().nonnegative(),
    duplicates: z.number().int().nonnegative(),
    /** Rejected callbacks counted by reason (e.g. "bad-signature", "stale-timestamp"). */
    rejected: z.record(z.string(), z.number().int().nonnegative()),
    /** The last refused callback; for a stale or future signature, this machine's clock minus its `t`. */
    lastRejection: z.object({ at: z.number(), reason: z.string(), clockOffsetMs: z.number().optional(), device: z.string().optional() }).optional(),
    /** The last request to a path the listener does not serve (path only, never a query). */
    lastUnknownPath: z.object({ at: z.number(), path: z.string() }).optional(),
    /** Keyed by "lock:ID", "doorbell:ID" or "user:". */
    lastCallbacks: z.record(z.string(), lastCallbackSchema),
  });

  /** Where the service calls this plugin: webhook.publicUrl, or the built-in tunnel and its state. */
  const publicAddressSchema = z.object({
    /** Without credentials; absent while a tunnel has not connected yet. */
    url: z.string().optional(),
    via: z.enum(['config', 'ngrok']),
    tunnel: z
      .object({
        state: z.enum(['connecting', 'connected', 'reconnecting', 'failed', 'closed']),
        /** What it means and what to do; never the authtoken. */
        message,
        since: z.number(),
        nextTryAt: z.number().optional(),
      })
      .optional(),
  });

  const deviceStatusSchema = z.object({
    kind: z.enum(['lock', 'doorbell']),
    id: z.string(),
    name: z.string(),
    /** Where the plugin knows it from. */
    source: z.enum(['config', 'service', 'both']),
    hidden: z.boolean().default(false),
    online: z.boolean().optional(),
  });

  /** Whether doorbell video works, and with which ffmpeg (its path is no secret; its command lines are). */
  const videoStatusSchema = z.object({
    state: z.enum(['checking', 'ready', 'unavailable']),
    ffmpegPath: z.string().optional(),
    ffmpegVersion: z.string().optional(),
    h264Encoder: z.string().optional(),
    /** Why video is off. */
    problem: message.optional(),
    secureVideo: z.boolean().optional(),
    replayMinutes: z.number().optional(),
  });

  const statusSchema = z.object({
    version: z.literal(STATUS_VERSION),
    updatedAt: z.number(),
    /** The plugin process that wrote it, so the UI can tell a stale file from a live one. */
    pid: z.number().optional(),
    startedAt: z.number().optional(),
    /** What runs: for the diagnostics file (the settings server cannot ask Homebridge itself). */
    versions: z.object({ plugin: z.string(), homebridge: z.string().optional(), node: z.string() }).optional(),
    link: linkStatusSchema,
    selfCheck: selfCheckSchema.optional(),
    publicAddress: publicAddressSchema.optional(),
    delivery: deliverySchema.optional(),
    registrations: z.array(registrationStatusSchema),
    receiver: receiverStatusSchema,
    devices: z.array(deviceStatusSchema),
    video: videoStatusSchema.optional(),
    /** The extra accounts, by id (status/account-status.ts). */
    accounts: accountsStatusSchema().optional(),
  });
  return statusSchema;
}

// The listener's answer to a callback: the verdict's status and a short JSON word, never a detail
// or a secret.
import type { FastifyReply } from 'fastify';

import type { Verdict } from './accept.js';

/** The reply body for a verdict: a short word, never a detail or a secret. */
function replyBody(verdict: Verdict): Record<string, unknown> {
  switch (verdict.kind) {
    case 'accepted':
      return { ok: true };
    case 'duplicate':
      return { ok: true, duplicate: true };
    case 'ignored':
      return { ok: true, ignored: true };
    case 'rejected':
      return { error: verdict.reason };
  }
}

/**
 * The answers to well-formed callbacks, serialised once: every callback gets one. A ready string
 * skips Fastify's serialisation on the way out, and Node writes it in one piece with the headers
 * (a Buffer body goes out as a second chunk, a costlier vectored write).
 */
const JSON_TYPE = 'application/json; charset=utf-8';
const READY_REPLIES: Partial<Record<Verdict['kind'], string>> = {
  accepted: JSON.stringify({ ok: true }),
  duplicate: JSON.stringify({ ok: true, duplicate: true }),
  ignored: JSON.stringify({ ok: true, ignored: true }),
};

/** Answers a callback with its verdict's status and body. */
export function sendVerdict(reply: FastifyReply, verdict: Verdict): void {
  const ready = READY_REPLIES[verdict.kind];
  if (ready === undefined) void reply.code(verdict.status).send(replyBody(verdict));
  else void reply.code(verdict.status).header('content-type', JSON_TYPE).send(ready);
}

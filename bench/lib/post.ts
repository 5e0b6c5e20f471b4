// Sends signed callbacks the way the service does (one POST per event) over keep-alive sockets,
// noting the moment the request is handed to the socket: the "first byte" of the latency figures.
import { Agent, request } from 'node:http';

import { signatureHeader } from '../../src/callbacks/signature.js';

export interface Target {
  /** Full callback URL. */
  url: string;
  apiKey: string;
  /** The registered custom header and its value, when the receiver expects one. */
  header?: { name: string; value: string } | undefined;
}

export interface Sent {
  status: number;
  /** performance.now() just before the request bytes were written. */
  t0: number;
  /** performance.now() when the answer ended. */
  t1: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function signedHeaders(target: Target, body: string, nowMs = Date.now()): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-svc-signature': signatureHeader(target.apiKey, Math.floor(nowMs / 1000), body),
  };
  if (target.header) headers[target.header.name] = target.header.value;
  return headers;
}

export function postSigned(target: Target, payload: object): Promise<Sent> {
  const body = JSON.stringify(payload);
  const headers = { ...signedHeaders(target, body), 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: 'POST', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, t0, t1: performance.now() });
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('callback POST timed out')));
    const t0 = performance.now();
    req.end(body);
  });
}

export function closeSenders(): void {
  agent.destroy();
}

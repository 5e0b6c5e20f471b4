// The listener's own https: the certificate and key files named in the config, read at start and
// read again when they change on disk.
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { createSecureContext } from 'node:tls';

import type { WebhookConfig } from '../config.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

export function readTls(webhook: WebhookConfig): { cert: Buffer; key: Buffer } | undefined {
  if (webhook.tlsCertFile === undefined || webhook.tlsCertFile === '' || webhook.tlsKeyFile === undefined || webhook.tlsKeyFile === '') return undefined;
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new Error(`The webhook listener cannot start: the TLS ${what} file ${file} cannot be read (${code}). Check webhook.${what === 'certificate' ? 'tlsCertFile' : 'tlsKeyFile'}.`);
    }
  };
  return { cert: read(webhook.tlsCertFile, 'certificate'), key: read(webhook.tlsKeyFile, 'key') };
}

/**
 * A renewed certificate needs no restart: the certificate and key files are looked at every few
 * seconds, and when either changed and the two form a valid pair, new connections get them. A pair
 * that does not fit (one file written, the other not yet, or a typo) keeps the old one, with a
 * warning once per change.
 */
export function watchTls(listener: unknown, webhook: WebhookConfig, log: Logger, intervalMs = 2_000): () => void {
  const { tlsCertFile, tlsKeyFile } = webhook;
  if (tlsCertFile === undefined || tlsKeyFile === undefined) return () => undefined;
  const interval = intervalMs;
  const server = listener as { setSecureContext(options: { cert: Buffer; key: Buffer }): void };
  const reload = () => {
    let cert: Buffer;
    let key: Buffer;
    try {
      cert = readFileSync(tlsCertFile);
      key = readFileSync(tlsKeyFile);
      createSecureContext({ cert, key });
    } catch (error) {
      log.warn(`The TLS certificate or key changed on disk but cannot be used yet (${errorText(error)}); the listener keeps the previous one. Check webhook.tlsCertFile and webhook.tlsKeyFile.`);
      return;
    }
    server.setSecureContext({ cert, key });
    log.info('The TLS certificate was renewed on disk: new connections use it (no restart needed).');
  };
  const onChange = (current: Stats, previous: Stats) => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size) reload();
  };
  watchFile(tlsCertFile, { interval, persistent: false }, onChange);
  watchFile(tlsKeyFile, { interval, persistent: false }, onChange);
  return () => {
    unwatchFile(tlsCertFile, onChange);
    unwatchFile(tlsKeyFile, onChange);
  };
}

// Why something failed, as one of a few message codes: the page words the reason in its language,
// where the error's own text (English, sometimes a foreign library's) could not be translated. The
// log keeps the error's text; the reason carries only a status or an error code.
import { messageCatalog, type UiMessage } from './ui-message.js';

export const REASON_MESSAGES = {
  'reason.timeout': 'no answer in time',
  'reason.network': 'no connection ({errorCode})',
  'reason.tls': 'the secure connection failed ({errorCode})',
  'reason.notLinked': 'the account is not linked',
  'reason.tokenRefused': 'the service refused the access token',
  'reason.rateLimited': 'the service asked to slow down (too many requests)',
  'reason.bridgeTimeout': 'the lock\'s Wi-Fi bridge did not answer in time',
  'reason.bridgeMissing': 'the lock has no Wi-Fi bridge',
  'reason.bridgeOffline': 'the lock\'s Wi-Fi bridge is offline',
  'reason.bridgeBusy': 'the lock\'s Wi-Fi bridge is busy with another command',
  'reason.httpStatus': 'the service answered HTTP {status}',
  'reason.refused': 'the service refused it ({oauthError})',
  'reason.file': 'a file could not be read or written ({errorCode})',
  'reason.other': 'an unexpected error (the Homebridge log has the details)',
} as const;

export const reasonMessage = messageCatalog(REASON_MESSAGES);

const BRIDGE_REASONS: Readonly<Record<string, keyof typeof REASON_MESSAGES>> = {
  timeout: 'reason.bridgeTimeout',
  noBridge: 'reason.bridgeMissing',
  offline: 'reason.bridgeOffline',
  busy: 'reason.bridgeBusy',
};

const FILE_CODES = new Set(['EACCES', 'EPERM', 'ENOSPC', 'EROFS', 'EDQUOT', 'EISDIR', 'ENOTDIR', 'EMFILE', 'EIO', 'EBUSY']);

interface Described {
  name?: unknown;
  code?: unknown;
  status?: unknown;
  problem?: unknown;
  oauthError?: unknown;
  cause?: unknown;
}

/** The first error code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`) in an error or its causes. */
function errorCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as Described).code;
    if (typeof code === 'string' && code !== '') return code;
    current = (current as Described).cause;
  }
  return undefined;
}

function isTlsCode(code: string): boolean {
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.includes('CERT') || code.includes('SELF_SIGNED');
}

/**
 * The reason of a failure. Errors are told apart by their class name, status and code (this layer
 * knows no cloud classes); what is not recognised is `reason.other`, and the log has its text.
 */
export function reasonOf(error: unknown): UiMessage {
  const described: Described = typeof error === 'object' && error !== null ? error : {};
  const name = typeof described.name === 'string' ? described.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return reasonMessage('reason.timeout');
  if (name === 'NotLinkedError') return reasonMessage('reason.notLinked');
  if (name === 'AuthorizationLostError') return reasonMessage('reason.tokenRefused');
  if (name === 'RateLimitedError') return reasonMessage('reason.rateLimited');
  // An OAuth refusal names itself in a code of the standard (invalid_grant): words of no language.
  if (typeof described.oauthError === 'string' && /^[a-z_]{1,40}$/.test(described.oauthError)) return reasonMessage('reason.refused', { oauthError: described.oauthError });
  const bridge = name === 'BridgeError' && typeof described.problem === 'string' ? BRIDGE_REASONS[described.problem] : undefined;
  if (bridge !== undefined) return reasonMessage(bridge);
  const code = errorCodeOf(error);
  if (code !== undefined) {
    if (code.includes('TIMEOUT') || code === 'ETIMEDOUT') return reasonMessage('reason.timeout');
    if (isTlsCode(code)) return reasonMessage('reason.tls', { errorCode: code });
    if (FILE_CODES.has(code)) return reasonMessage('reason.file', { errorCode: code });
    if (/^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return reasonMessage('reason.network', { errorCode: code });
  }
  if (typeof described.status === 'number') return reasonMessage('reason.httpStatus', { status: described.status });
  return reasonMessage('reason.other');
}

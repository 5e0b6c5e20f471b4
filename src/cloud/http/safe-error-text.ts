// Error text for logs and the UI from the token jobs: this plugin's own errors carry messages
// written without secrets; anything foreign (a fetch failure, a parser) is reduced to its kind,
// since its message could echo a URL, a header or a body.
import { errorText } from '../../util/error-text.js';
import { CloudError } from './errors.js';
import { describeNetworkError } from './network-error.js';

/** Errors of storage.ts and file-lock.ts, known by name: their messages name a file and what is wrong with it. */
const OWN_ERROR_NAMES = new Set(['StorageError', 'FileLockTimeoutError']);

export function safeErrorText(error: unknown): string {
  if (error instanceof CloudError || (error instanceof Error && OWN_ERROR_NAMES.has(error.name))) return errorText(error);
  return describeNetworkError(error);
}

// Error text for logs and the UI (no secret in any log line or error message).
import { describe, expect, it } from 'vitest';

import { RefreshRejectedError } from '../../../src/cloud/http/errors.js';
import { FileLockTimeoutError } from '../../../src/util/file-lock.js';
import { safeErrorText } from '../../../src/cloud/http/safe-error-text.js';
import { StorageError } from '../../../src/storage.js';

describe('error text never carries a foreign message', () => {
  it('the plugin\'s own errors keep their words', () => {
    expect(safeErrorText(new RefreshRejectedError('The service refused it.'))).toBe('The service refused it.');
    expect(safeErrorText(new StorageError('/x/tokens.json is not valid JSON'))).toBe('/x/tokens.json is not valid JSON');
    expect(safeErrorText(new FileLockTimeoutError('/x/tokens.lock', 45_000))).toBe('another process held /x/tokens.lock for more than 45 s');
  });

  it('anything else is reduced to its kind, whatever its message says', () => {
    const leaky = new TypeError('fetch failed for https://auth.example/access_token?refresh_token=rt_secret', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) });
    expect(safeErrorText(leaky)).toBe('network error ECONNRESET');
    expect(safeErrorText(new Error('Bearer secret-token'))).toBe('network error');
    expect(safeErrorText(new DOMException('The operation timed out.', 'TimeoutError'))).toBe('no answer in time');
    expect(safeErrorText('rt_secret')).toBe('network error');
  });
});

// Remote operate (public API knowledge; the spec only refers to it): PUT /remoteoperate/{lockID}/{action}.
// `status` makes the service send `status` callbacks with the current state to every listener.
import type { ApiClient } from './http/api.js';
import { BRIDGE_STATUS, BridgeError, CloudError } from './http/errors.js';

export type RemoteAction = 'lock' | 'unlock' | 'status';

/** Remote operations wait for the lock's bridge; give them longer than an ordinary call. */
export const REMOTE_OPERATE_TIMEOUT_MS = 30_000;

/**
 * Sends one command. Errors stay typed: BridgeError for 408/409/422/423 (whichever layer noticed
 * the status), and the client's errors otherwise. Never retried here: a repeated unlock is the
 * user's decision, not ours.
 */
export async function operateLock(client: ApiClient, lockId: string, action: RemoteAction): Promise<void> {
  try {
    await client.request('PUT', `/remoteoperate/${encodeURIComponent(lockId)}/${action}`, { timeoutMs: REMOTE_OPERATE_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof CloudError && !(error instanceof BridgeError) && error.status !== undefined) {
      const problem = BRIDGE_STATUS[error.status];
      if (problem) throw new BridgeError(problem, error.status);
    }
    throw error;
  }
}

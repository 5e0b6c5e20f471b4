import type { PartResult, RunOptions } from '../lib/types.js';
export function runSoak(_options: RunOptions, ..._rest: unknown[]): Promise<PartResult> {
  return Promise.reject(new Error('being written'));
}

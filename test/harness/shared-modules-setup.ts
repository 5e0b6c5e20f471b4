// The fast lane's files share their modules in a worker (vitest.config.ts): a file that turned fake
// timers on and did not turn them off must not hand them to the next file.
import { afterAll, vi } from 'vitest';

afterAll(() => {
  vi.useRealTimers();
});

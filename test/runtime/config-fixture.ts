// A plugin config as src/config.ts parses it, so defaults (doorSensor, hidden, motion timeout,
// discovery) are the real ones; tests give only the fields they are about.
import { configSchema, type LockAccessConfig } from '../../src/config.js';

export function runtimeConfig(overrides: Record<string, unknown> = {}): LockAccessConfig {
  return configSchema().parse({
    platform: 'LockAccess',
    apiKey: 'k',
    clientId: 'c',
    clientSecret: 's',
    baseUrl: 'https://api.example.com',
    authUrl: 'https://auth.example.com',
    webhook: { publicUrl: 'https://home.example.net/lock-access' },
    ...overrides,
  });
}

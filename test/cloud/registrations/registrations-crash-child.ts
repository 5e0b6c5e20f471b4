// Child process of registrations-crash.test.ts: runs one reconcile against the simulator and is
// killed (SIGKILL) by the test while the calls are under way.
import { CloudHttpClient } from '../../../src/cloud/http/http-client.js';
import { WebhookRegistrar } from '../../../src/cloud/registrations/registrations.js';
import { TokenManager } from '../../../src/cloud/tokens/token-manager.js';
import { WebhookSecret } from '../../../src/cloud/registrations/webhook-secret.js';
import { Storage } from '../../../src/storage.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const storage = new Storage(env('CHILD_STORAGE'));
const tokens = new TokenManager({
  storage: new Storage(env('CHILD_TOKENS')),
  authUrl: env('SIM_AUTH'),
  baseUrl: env('SIM_BASE'),
  apiKey: env('SIM_API_KEY'),
  clientId: env('SIM_CLIENT_ID'),
  clientSecret: env('SIM_CLIENT_SECRET'),
  seeds: { refreshToken: env('SIM_REFRESH_TOKEN') },
  log: quiet,
});
await tokens.start();
const registrar = new WebhookRegistrar({
  client: new CloudHttpClient({ baseUrl: env('SIM_BASE'), apiKey: env('SIM_API_KEY'), tokens }),
  storage,
  clientId: env('SIM_CLIENT_ID'),
  publicUrl: () => env('PUBLIC_URL'),
  secret: await WebhookSecret.load(storage),
  log: quiet,
  concurrency: 1,
});
process.stdout.write('reconciling\n');
await registrar.reconcile({ locks: env('LOCKS').split(','), doorbells: [], user: false });
process.stdout.write('done\n');

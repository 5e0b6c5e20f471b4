// A complete, valid LockAccess platform block as a user's config.json holds it: the starting point
// of the config tests, each changing one field.
export const COMPLETE_BLOCK = {
  platform: 'LockAccess', name: 'Lock Access',
  apiKey: 'key-1', clientId: 'client-1', clientSecret: 'secret-1',
  baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com',
  webhook: { publicUrl: 'https://home.example.net/lock-access', listenPort: 8582 },
  locks: [{ id: 'LOCK-1', name: 'Front' }],
};

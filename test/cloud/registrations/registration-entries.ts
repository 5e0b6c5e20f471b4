// Ledger entries as the registrar leaves them after a confirmed registration, for the plan and
// ledger tests.
import type { LedgerEntry } from '../../../src/cloud/registrations/registration-ledger.js';
import { desiredRegistrations } from '../../../src/cloud/registrations/registration-plan.js';

export const context = { publicUrl: 'https://home.example.net/lock-access/', clientId: 'client-1', token: { generation: 1, fingerprint: 'aaaa' } };
export const NOW = 1_800_000_000_000;

export function confirmed(overrides: Partial<LedgerEntry> & Pick<LedgerEntry, 'kind' | 'id'>): LedgerEntry {
  const desired = desiredRegistrations({ locks: overrides.kind === 'lock' ? [overrides.id] : [], doorbells: overrides.kind === 'doorbell' ? [overrides.id] : [], user: overrides.kind === 'user' }, context)[0];
  if (!desired) throw new Error('no desired registration');
  return {
    clientId: desired.clientId,
    url: desired.url,
    types: [...desired.types],
    tokenGeneration: desired.tokenGeneration,
    tokenFingerprint: desired.tokenFingerprint,
    state: 'registered',
    lastSuccessAt: NOW - 1_000,
    ...overrides,
  };
}

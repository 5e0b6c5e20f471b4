// The device fleet every benchmark uses: 100 locks (with door sensors) and 20 doorbells.
export const LOCK_COUNT = 100;
export const DOORBELL_COUNT = 20;

export interface Fleet {
  locks: { id: string; name: string }[];
  doorbells: { id: string; name: string }[];
}

export function fleet(locks = LOCK_COUNT, doorbells = DOORBELL_COUNT): Fleet {
  return {
    locks: Array.from({ length: locks }, (_, i) => ({ id: `LOCK-${String(i + 1).padStart(3, '0')}`, name: `Lock ${String(i + 1).padStart(3, '0')}` })),
    doorbells: Array.from({ length: doorbells }, (_, i) => ({ id: `BELL-${String(i + 1).padStart(2, '0')}`, name: `Doorbell ${String(i + 1).padStart(2, '0')}` })),
  };
}

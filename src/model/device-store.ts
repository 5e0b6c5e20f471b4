// Where a device keeps what must survive a restart (its state, a delay changed from HomeKit, the
// chime switch, the door history). The model says what to keep under which key and how soon;
// where it lives is the records' concern (devices.json, src/storage/device-records.ts).
export interface DeviceStore {
  read(key: string): unknown;
  /**
   * Keeps `value` under `key`. `batched` (state that changes with every event) is written with the
   * next quiet moment; `now` (a choice the user made) is written at once.
   */
  write(key: string, value: unknown, when: 'batched' | 'now'): void;
  /** The device is gone: nothing more is written for it. */
  dispose(): void;
}

/** A store that keeps values in memory only: nothing survives a restart (tests and tools). */
export function memoryStore(initial: Record<string, unknown> = {}): DeviceStore {
  const values: Record<string, unknown> = { ...initial };
  return {
    read: (key) => values[key],
    write: (key, value) => {
      values[key] = value;
    },
    dispose: () => undefined,
  };
}

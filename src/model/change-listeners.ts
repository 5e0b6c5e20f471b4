// Lets the views (HomeKit, Matter, the status file) follow the changes a device made, so there is one
// reducer per device. A listener that throws is logged and never disturbs HomeKit or the others.
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

export type ChangeListener<T> = (change: T) => void;

export class ChangeListeners<T> {
  private readonly listeners = new Set<ChangeListener<T>>();

  /** `log` prefixes the device's name. */
  constructor(private readonly log: Logger) {}

  /** Returns the function that removes the listener again. */
  add(listener: ChangeListener<T>): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit(change: T): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.log.error(`a follower of its state failed (${errorText(error)}).`);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

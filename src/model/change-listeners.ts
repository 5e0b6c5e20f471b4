// Lets the views (HomeKit, Matter, the status file) follow the changes a device made, so there is one
// reducer per device. A listener that throws is logged and never disturbs HomeKit or the others.
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

export type ChangeListener<T> = (change: T) => void;

/**
 * Who hears a change first, whatever the order of subscribing: the model's own rules (the guard,
 * which may act on the change) before the views that show it.
 */
export type ListenerPhase = 'model' | 'view';

export class ChangeListeners<T> {
  private readonly phases: Record<ListenerPhase, Set<ChangeListener<T>>> = { model: new Set(), view: new Set() };

  /** `log` prefixes the device's name. */
  constructor(private readonly log: Logger) {}

  /** Returns the function that removes the listener again. */
  add(listener: ChangeListener<T>, phase: ListenerPhase = 'view'): () => void {
    const listeners = this.phases[phase];
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  emit(change: T): void {
    this.tell(this.phases.model, change);
    this.tell(this.phases.view, change);
  }

  private tell(listeners: Set<ChangeListener<T>>, change: T): void {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (error) {
        this.log.error(`a follower of its state failed (${errorText(error)}).`);
      }
    }
  }

  clear(): void {
    this.phases.model.clear();
    this.phases.view.clear();
  }
}

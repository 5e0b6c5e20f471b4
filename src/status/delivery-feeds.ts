// Several accounts' delivery watches as the one "Lock Access Events Stopped" sensor sees them: not
// arriving while any account's events are not arriving; else arriving once any has heard, else not
// yet known. Each watch keeps its own state; this only reads them.
import type { DeliveryFeed, DeliveryState } from '../model/delivery-state.js';

export function anyNotArriving(feeds: readonly DeliveryFeed[]): DeliveryFeed {
  const state = (): DeliveryState => {
    const states = feeds.map((feed) => feed.state);
    if (states.includes('notArriving')) return 'notArriving';
    return states.includes('arriving') ? 'arriving' : 'unknown';
  };
  return {
    get state() {
      return state();
    },
    onChange: (listener) => {
      let last = state();
      const stops = feeds.map((feed) => feed.onChange(() => {
        const now = state();
        if (now === last) return;
        last = now;
        listener(now);
      }));
      return () => {
        for (const stop of stops) stop();
      };
    },
  };
}

/** Runs one job at a time, in the order asked: no two accounts probe at the same moment. */
export function oneAtATime(): (job: () => Promise<void>) => Promise<void> {
  let last: Promise<void> = Promise.resolve();
  return (job) => {
    const next = last.then(job, job);
    last = next.catch(() => undefined);
    return next;
  };
}

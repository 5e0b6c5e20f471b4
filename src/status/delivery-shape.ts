// Whether events arrive, as the status file keeps it: the main account's `delivery` and each extra
// account's `accounts.<id>.delivery` have this one shape, so the page reads both alike.
import { z } from 'zod/v3';

import { uiMessageSchema } from '../util/ui-message.js';

/** The entry's schema (made on use, like the status file's: zod objects kept cost memory). */
export function deliveryStatusSchema() {
  const message = uiMessageSchema();
  return z.object({
    state: z.enum(['unknown', 'arriving', 'notArriving']),
    /** When this state began. */
    since: z.number(),
    checkEveryMinutes: z.number(),
    /** The last verified callback known at the last change or check. */
    lastHeardAt: z.number().optional(),
    lastCheck: z
      .object({
        at: z.number(),
        /** `probe`: a lock was asked for its state; `registrations`: no lock to ask (doorbells only); `wayIn`: the way in could not be built. */
        how: z.enum(['probe', 'registrations', 'wayIn']),
        lockId: z.string().optional(),
        outcome: z.enum(['arrived', 'nothing', 'notAsked', 'checked']),
        message,
      })
      .optional(),
    /** What was done and found when events stopped arriving. */
    checked: z.object({ registrations: message, selfCheck: message }).optional(),
    nextCheckAt: z.number().optional(),
  });
}

export type DeliveryEntry = z.infer<ReturnType<typeof deliveryStatusSchema>>;

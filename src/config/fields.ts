// The config's field schemas shared by the block and by each extra account: secrets, addresses and
// device ids, each with a message that says what to fix (a code the settings page words, and its
// English sentence for the log).
import { z } from 'zod/v3';

import { fieldProblem } from '../util/field-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { configProblem } from './config-messages.js';

/** A secret pasted into the settings: spaces around it are refused (never echoed), an empty one too. */
export const secret = (field: string, fix: UiMessage) =>
  z
    .string({ message: fieldProblem('config.field.missing', { field, fix }) })
    .refine((value) => value.trim() === value, { message: fieldProblem('config.field.spaces', { field }) })
    .refine((value) => value.length > 0, { message: fieldProblem('config.field.empty', { field, fix }) });

/** A full http(s) address; `mustMatch` is a further pattern with its own message (zod's words). */
export function httpUrl(field: string, example: string, mustMatch?: { pattern: RegExp; message: string }) {
  const text = z.string({ message: fieldProblem('config.field.address.missing', { field, example }) });
  return (mustMatch === undefined ? text : text.regex(mustMatch.pattern, mustMatch.message)).refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, { message: fieldProblem('config.field.address.notHttp', { field, example }) });
}

/** A device id: spaces around it are a paste slip, so they are trimmed; an empty one is refused. */
export const deviceId = (kind: 'lock' | 'doorbell') =>
  z
    .string({ message: configProblem(kind === 'lock' ? 'config.lock.idMissing' : 'config.doorbell.idMissing') })
    .trim()
    // After trimming, "has a character that is not a space" is "not empty"; as a pattern the
    // settings form, which cannot trim, refuses an id of spaces alike.
    .regex(/\S/, configProblem(kind === 'lock' ? 'config.lock.idEmpty' : 'config.doorbell.idEmpty'));

/** A switch of the config: true or false, never "true" in quotes. */
export const switchField = (field: string) => z.boolean({ message: fieldProblem('config.field.switch', { field }) });

/** The main account's id: the top-level account fields. Reserved, so no extra account can take it. */
export const MAIN_ACCOUNT_ID = 'main';

/** An extra account's id: routes (`/a/<id>/…`) and its storage folder (`accounts/<id>/`) use it. */
export const ACCOUNT_ID_PATTERN = '^[a-z0-9-]{1,32}$';

/** The account a device entry names as its owner: `main` or an extra account's id. */
export const ownerField = () =>
  z
    .string({ message: configProblem('config.owner.invalid') })
    .regex(new RegExp(ACCOUNT_ID_PATTERN), configProblem('config.owner.pattern'))
    .optional();

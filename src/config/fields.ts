// The config's field schemas shared by the block and by each extra account: secrets, addresses and
// device ids, each with a message that says what to fix.
import { z } from 'zod/v3';

/** A secret pasted into the settings: spaces around it are refused (never echoed), an empty one too. */
export const secret = (field: string, where: string) =>
  z
    .string({ message: `${field} is missing: ${where}` })
    .refine((value) => value.trim() === value, { message: `${field} has spaces or line breaks at its start or end: paste it again without them` })
    .refine((value) => value.length > 0, { message: `${field} is empty: ${where}` });

/** A full http(s) address; `mustMatch` is a further pattern with its own message. */
export function httpUrl(field: string, example: string, mustMatch?: { pattern: RegExp; message: string }) {
  const text = z.string({ message: `${field} is missing: enter an address such as ${example}` });
  return (mustMatch === undefined ? text : text.regex(mustMatch.pattern, mustMatch.message)).refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, { message: `${field} must be a full http(s) address such as ${example}` });
}

/** A device id: spaces around it are a paste slip, so they are trimmed; an empty one is refused. */
export const deviceId = (kind: string) =>
  z
    .string({ message: `each ${kind} needs an id: copy it from the Lock Access app or use Find my devices in the plugin settings` })
    .trim()
    // After trimming, "has a character that is not a space" is "not empty"; as a pattern the
    // settings form, which cannot trim, refuses an id of spaces alike.
    .regex(/\S/, `the ${kind} id is empty: copy it from the Lock Access app or use Find my devices in the plugin settings`);

/** The main account's id: the top-level account fields. Reserved, so no extra account can take it. */
export const MAIN_ACCOUNT_ID = 'main';

/** An extra account's id: routes (`/a/<id>/…`) and its storage folder (`accounts/<id>/`) use it. */
export const ACCOUNT_ID_PATTERN = '^[a-z0-9-]{1,32}$';

/** The account a device entry names as its owner: `main` or an extra account's id. */
export const ownerField = () =>
  z
    .string({ message: 'account must be the id of an account in this block ("main" for the top-level one)' })
    .regex(new RegExp(ACCOUNT_ID_PATTERN), 'account must be the id of an account in this block ("main" for the top-level one): 1 to 32 lowercase letters, digits or dashes')
    .optional();

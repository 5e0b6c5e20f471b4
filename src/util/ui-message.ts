// A message the settings page shows in the user's language: a catalog key, the values of its
// placeholders, and the English sentence. The page words `code` with `params` from its catalog and
// shows `text` only for a code it does not know; logs, diagnostics and the status file keep `text`.
import { z } from 'zod/v3';

/** A catalog key: dotted, the same rule the page's catalogs follow. */
export const MESSAGE_CODE = /^[a-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/;

/**
 * Numbers, names, ids and ISO times: never prose, which could not be translated. A reason that is
 * itself a message (why something failed) is a message param, worded by the page in its turn.
 */
export type MessageParams = Record<string, MessageParam>;
export type MessageParam = number | string | UiMessage;

/** An English template: `{name}` placeholders, or plural forms chosen by the `count` param. */
export type MessageTemplate = string | { readonly one: string; readonly other: string };

export interface UiMessage {
  code: string;
  params: MessageParams;
  text: string;
}

/** The schema of a message in a file or an answer (made on use: zod objects cost memory kept). */
export function uiMessageSchema(): z.ZodType<UiMessage> {
  const message: z.ZodType<UiMessage> = z.lazy(() =>
    z.object({
      code: z.string().regex(MESSAGE_CODE),
      params: z.record(z.string(), z.union([z.number(), z.string(), message])),
      text: z.string(),
    }),
  );
  return message;
}

/**
 * The code of a message an older version wrote as a sentence: no catalog has it, so the page shows
 * the sentence as it is (its rule for any code it does not know).
 */
export const LEGACY_MESSAGE_CODE = 'legacy.text';

/** An older version's sentence as a message. */
export function legacyMessage(text: string): UiMessage {
  return { code: LEGACY_MESSAGE_CODE, params: {}, text };
}

/** A message with its English sentence already written (see messageCatalog for the usual way). */
export function uiMessage(code: string, params: MessageParams, text: string): UiMessage {
  return { code, params, text };
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The English sentence of a template: each `{name}` filled, a plural form chosen by `count`. */
export function fillTemplate(template: MessageTemplate, params: Readonly<MessageParams>): string {
  // English's plural rule for the counts a message shows (whole numbers): `one` is exactly 1.
  const form = typeof template === 'string' ? template : params.count === 1 ? template.one : template.other;
  return form.replace(PLACEHOLDER, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === 'object' ? value.text : String(value);
  });
}

/** A constructor of one area's messages, its codes typed from its templates. */
export type MessageMaker<Code extends string> = (code: Code, params?: MessageParams) => UiMessage;

/**
 * One area's English templates, keyed by code, and the function that makes their messages. The
 * same templates are en.json's values for these keys (a test keeps them equal), so the sentence a
 * log line or diagnostics file shows is the one the English page shows.
 */
export function messageCatalog<const T extends Record<string, MessageTemplate>>(templates: T): MessageMaker<Extract<keyof T, string>> {
  const lookup: Readonly<Partial<Record<string, MessageTemplate>>> = templates;
  return (code, params = NO_PARAMS) => ({ code, params, text: fillTemplate(lookup[code] ?? code, params) });
}

/**
 * The params of a message that has none, one object for all of them: the event log keeps
 * thousands of such messages for as long as Homebridge runs. Frozen, so no one can fill it.
 */
export const NO_PARAMS: MessageParams = Object.freeze({});

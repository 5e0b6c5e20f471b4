// A config field's problem as a message code: the settings page shows it next to the field in the
// user's language, the log in English. A schema's own words are made here (fieldProblem) and given
// to zod as their English sentence, which is remembered with its code and params, so a parse's
// issue finds its message again (issueMessage); zod's own words (a wrong type, a number out of
// range without words of ours) get a code of their kind. Params are field names, numbers and
// values, never English words: what to fix is a message param of its own (`{fix}`).
import type { z } from 'zod/v3';

import { messageCatalog, type MessageParams, type UiMessage } from './ui-message.js';

export const FIELD_MESSAGES = {
  'config.field.missing': '{field} is missing: {fix}',
  'config.field.empty': '{field} is empty: {fix}',
  'config.field.spaces': '{field} has spaces or line breaks at its start or end: paste it again without them',
  'config.field.switch': '{field} must be true or false (a switch, without quotes)',
  'config.field.number': '{field} must be a number',
  'config.field.seconds': '{field} must be a number of seconds',
  'config.field.minutes': '{field} must be a number of minutes',
  'config.field.wholeMinutes': '{field} must be a whole number of minutes',
  'config.field.wholeNumber': '{field} must be a whole number',
  'config.field.range': '{field} must be {min} to {max}',
  'config.field.atLeast': '{field} must be at least {min}',
  'config.field.atMost': '{field} must be at most {max}',
  'config.field.offOrRange': '{field} must be 0 (off) or {min} to {max}',
  'config.field.offToMax': '{field} must be 0 (off) to {max}',
  'config.field.neverToMax': '{field} must be 0 (never) to {max}',
  'config.field.address.missing': '{field} is missing: enter an address such as {example}',
  'config.field.address.notHttp': '{field} must be a full http(s) address such as {example}',
  'config.field.text': '{field} must be text',
  'config.field.notEmpty': '{field} must not be empty',
  'config.field.list': '{field} must be a list',
  'config.field.section': '{field} must be a group of settings',
  'config.field.literal': '{field} must be {expected}',
  'config.field.invalid': '{field} has a value the plugin cannot use: check it in the plugin settings',
} as const;

export const fieldMessage = messageCatalog(FIELD_MESSAGES);

/** The messages of the schemas' own words, by their English sentence (a few dozen, all short). */
const bySentence = new Map<string, UiMessage>();

/** A schema's words for zod: the message's English sentence, remembered so issueMessage finds its code. */
export function zodWords(message: UiMessage): string {
  bySentence.set(message.text, message);
  return message.text;
}

/** fieldMessage as zod's words, in one call. */
export function fieldProblem(code: keyof typeof FIELD_MESSAGES, params?: MessageParams): string {
  return zodWords(fieldMessage(code, params));
}

/** The field an issue names, as a user finds it in the settings: the last name of its path. */
function fieldOf(issue: z.ZodIssue): string {
  return issue.path.filter((part): part is string => typeof part === 'string').at(-1) ?? 'config';
}

/** zod's own words for an issue, as one of our codes of the same kind. */
function kindMessage(issue: z.ZodIssue): UiMessage {
  const field = fieldOf(issue);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'boolean') return fieldMessage('config.field.switch', { field });
      if (issue.expected === 'integer') return fieldMessage('config.field.wholeNumber', { field });
      if (issue.expected === 'number') return fieldMessage('config.field.number', { field });
      if (issue.expected === 'string') return fieldMessage('config.field.text', { field });
      if (issue.expected === 'array') return fieldMessage('config.field.list', { field });
      if (issue.expected === 'object') return fieldMessage('config.field.section', { field });
      break;
    case 'invalid_literal':
      return fieldMessage('config.field.literal', { field, expected: JSON.stringify(issue.expected) });
    case 'too_small':
      if (issue.type === 'string') return fieldMessage('config.field.notEmpty', { field });
      if (issue.type === 'number') return fieldMessage('config.field.atLeast', { field, min: Number(issue.minimum) });
      break;
    case 'too_big':
      if (issue.type === 'number') return fieldMessage('config.field.atMost', { field, max: Number(issue.maximum) });
      break;
    default:
      break;
  }
  return fieldMessage('config.field.invalid', { field });
}

/** The message of a parse's issue: the schema's own words with their code, else one of zod's kind. */
export function issueMessage(issue: z.ZodIssue): UiMessage {
  return bySentence.get(issue.message) ?? kindMessage(issue);
}

// The one error the settings page shows: its message is a code with params and the English
// sentence (the error's own message, for the log). Anything else that escapes the backend is
// logged by homebridge-ui/server.js and answered in general words.
import type { UiMessage } from '../util/ui-message.js';

export class UiError extends Error {
  constructor(readonly uiMessage: UiMessage) {
    super(uiMessage.text);
    this.name = 'UiError';
  }
}

// The one error the settings page shows as it is: its message is written for the user. Anything
// else that escapes the backend is logged by homebridge-ui/server.js and answered in general words.
export class UiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UiError';
  }
}

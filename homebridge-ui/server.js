// The settings UI's server: started by the Homebridge UI as a child process while the plugin's
// settings are open. Plain JavaScript so it runs from the installed package; the logic is the
// built, typed SettingsUiBackend, bundled with the rest it needs into ../dist/settings-ui/server-parts.js.
// Answers never carry secrets.
import { HomebridgePluginUiServer, RequestError } from '@homebridge/plugin-ui-utils';

import { CloudHttpClient, configProblems, errorText, peopleSeen, readMatterPairing, serverMessage, SettingsUiBackend, UiError } from '../dist/settings-ui/server-parts.js';

const prefix = '[Lock Access settings]';

class LockAccessUiServer extends HomebridgePluginUiServer {
  constructor() {
    super();
    this.backend = new SettingsUiBackend({
      storagePath: this.homebridgeStoragePath,
      configPath: this.homebridgeConfigPath,
      // The plugin's own API client (unlink, recordings, the device list).
      createClient: (account, tokens, log) => new CloudHttpClient({ baseUrl: account.baseUrl, apiKey: account.apiKey, tokens, log }),
      log: {
        // stdout and stderr of this process end up in the Homebridge UI log.
        info: (message) => console.log(`${prefix} ${message}`),
        warn: (message) => console.warn(`${prefix} ${message}`),
        error: (message) => console.error(`${prefix} ${message}`),
        debug: () => undefined,
      },
    });

    this.handle('/status', (body) => this.backend.status(body));
    this.handle('/events', () => this.backend.events());
    this.handle('/people', async () => peopleSeen(await this.backend.events()));
    this.handle('/keypad-codes', () => this.backend.keypadCodes());
    this.handle('/oauth/start', (body) => this.backend.startAuthorization(body));
    this.handle('/oauth/finish', (body) => this.backend.finishAuthorization(body));
    this.handle('/link/refresh-token', (body) => this.backend.linkWithRefreshToken(body));
    this.handle('/test-connection', (body) => this.backend.testConnection(body));
    this.handle('/unlink', (body) => this.backend.unlink(body));
    this.handle('/video', (body) => this.backend.video(body));
    this.handle('/discover', (body) => this.backend.discover(body));
    // Support: a test event that proves the whole way from the service, and the diagnostics file.
    this.handle('/test-event/start', (body) => this.backend.startTestEvent(body));
    this.handle('/test-event/result', (body) => this.backend.testEventResult(body));
    this.handle('/diagnostics', () => this.backend.diagnostics());
    // Before the page hands a changed config block to the Homebridge UI: the plugin's own config
    // rules, one problem per field, so a value the plugin would refuse is never saved.
    this.handle('/config/check', (body) => ({ problems: configProblems(body.config) }));
    // Matter: on or off for this bridge, and Homebridge's pairing code when on.
    this.handle('/matter', () => readMatterPairing({ storagePath: this.homebridgeStoragePath, configPath: this.homebridgeConfigPath }));

    // The Homebridge UI ends this process when the page closes (SIGTERM). Tokens of a new link that
    // could not be written exist only here: the process stays until they are saved.
    let ending = false;
    process.on('SIGTERM', () => {
      if (ending) return;
      ending = true;
      void this.backend.safeToExit().finally(() => process.exit(0));
    });

    this.ready();
  }

  /**
   * Every failure reaches the page as a RequestError with words for the user, never a stack trace:
   * its message is the English sentence, its data the message code and params the page words.
   */
  handle(path, fn) {
    this.onRequest(path, async (body) => {
      try {
        return await fn(body ?? {});
      } catch (error) {
        if (error instanceof UiError) throw refusal(path, error.uiMessage);
        console.error(`${prefix} ${path} failed: ${errorText(error)}`);
        throw refusal(path, serverMessage('server.unexpected', { reason: errorText(error, 'unknown error') }));
      }
    });
  }
}

/** A refusal the page shows: `{code, params, text}` in the error's data, the sentence as its message. */
function refusal(path, message) {
  return new RequestError(message.text, { path, ...message });
}

(() => new LockAccessUiServer())();

// What the settings server (homebridge-ui/server.js, plain JavaScript the Homebridge UI starts each
// time the settings open) takes from the plugin, in one module: the build bundles it into one file,
// which loads in about half the time of the modules one by one.
export { configProblems } from './config-check.js';
export { readMatterPairing } from './matter-pairing.js';
export { SettingsUiBackend } from './settings-ui-backend.js';
export { serverMessage } from './server-messages.js';
export { UiError } from './ui-error.js';
export { peopleSeen } from '../status/people-seen.js';
export { errorText } from '../util/error-text.js';
export { CloudHttpClient } from '../cloud/http/http-client.js';

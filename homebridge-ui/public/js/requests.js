// @ts-check
// Talking to the settings server (homebridge-ui/server.js) through the Homebridge UI.
import { say } from './dom.js';
import { errorMessage } from './messages.js';

/** The Homebridge UI's helper object, injected into this frame by @homebridge/plugin-ui-utils. */
export function hb() {
  return window.homebridge;
}

/**
 * Asks the settings server. A refusal is shown in words (in `resultBox`, else as a toast; in the
 * page's language when the server gives its code) and yields undefined, so callers only handle
 * the answer.
 * @template T
 * @param {string} path
 * @param {unknown} body
 * @param {string} [resultBox] id of the result box for the error
 * @returns {Promise<T | undefined>}
 */
export async function call(path, body, resultBox) {
  try {
    return /** @type {T} */ (await hb().request(path, body));
  } catch (error) {
    const message = errorMessage(error);
    if (resultBox) say(resultBox, message, 'error');
    else hb().toast.error(message, 'Lock Access');
    return undefined;
  }
}

/**
 * Asks the settings server and yields undefined on any failure (for the quiet background refresh).
 * @template T
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T | undefined>}
 */
export async function quietly(path, body) {
  try {
    return /** @type {T} */ (await hb().request(path, body));
  } catch {
    return undefined;
  }
}

// A request of the page that failed below (the service, the network): the page is told why as a
// reason code (reason.*) it words in its language; the error's own words, English and sometimes a
// library's, go to the settings server's log with the same sentence.
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { reasonOf } from '../util/reason-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { serverMessage } from './server-messages.js';

type ReasonCode = 'server.video.notFound' | 'server.devices.notListed' | 'server.testEvent.notTaken' | 'server.link.failed';

export function failureMessage(log: Pick<Logger, 'warn'>, code: ReasonCode, error: unknown): UiMessage {
  log.warn(serverMessage(code, { reason: errorText(error) }).text);
  return serverMessage(code, { reason: reasonOf(error) });
}

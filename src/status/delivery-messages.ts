// What the delivery watch found, as message codes: the status file's last check and what was
// checked when events stopped arriving. A `reason` or `result` param is itself a message (why a
// request failed, what the self-check found); the names are the devices' names.
import { messageCatalog } from '../util/ui-message.js';

export const DELIVERY_MESSAGES = {
  'deliveryCheck.cannotArrive': 'Events cannot arrive: {reason}',
  'deliveryCheck.noListener': 'the webhook listener did not start (its error is in the Homebridge log).',
  'deliveryCheck.noLockToAsk': 'No lock to ask for its state: {registrations}; {selfCheck}.',
  'deliveryCheck.arrived': 'A status request for {name} came back as a callback.',
  'deliveryCheck.notAsked': 'No lock could be asked for its state ({name}: {reason}).',
  'deliveryCheck.nothing': 'A status request for {name} brought no callback within {seconds} s of its answer.',
  'deliveryCheck.registrations.running': 'every webhook registration is being sent again (the log says how it went)',
  'deliveryCheck.registrations.notLinked': 'the webhook registrations could not be sent again: the account is not linked',
  'deliveryCheck.selfCheck.running': 'the public address self-check is still running (the log says how it went)',
  'deliveryCheck.selfCheck.noListener': 'the public address self-check could not run: the webhook listener is not running',
  'deliveryCheck.selfCheck.noAddress': 'the public address self-check could not run: the tunnel has not connected, so there is no public address (its error is in the log above)',
  'deliveryCheck.selfCheck.noResult': 'the public address self-check gave no result',
  'deliveryCheck.selfCheck.passes': 'the public address self-check passes ({result})',
  'deliveryCheck.selfCheck.fails': 'the public address self-check fails: {result}',
  'deliveryCheck.failed': 'it failed ({reason})',
  'registration.failed': 'Failed: {reason}',
} as const;

export const deliveryMessage = messageCatalog(DELIVERY_MESSAGES);

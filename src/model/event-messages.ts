// The event log's lines as message codes: the settings page words each in the user's language,
// the Homebridge log and the `text` of events.json keep the English sentence. A person's name,
// a device name, a number or a schedule fills a placeholder; `{line}` is another line of this
// catalog (a PIN change with its schedule, then who made it). An unnamed person is a word of its
// own: `event.someone` after "by", `event.someoneSubject` as the subject (languages decline it).
import { messageCatalog, type MessageParams } from '../util/ui-message.js';

export const EVENT_MESSAGES = {
  'event.autoLock': 'Locked by auto-lock (the door was closed for {seconds} s)',
  'event.statusCheck.locked': 'Status check: locked',
  'event.statusCheck.unlocked': 'Status check: unlocked',
  'event.statusCheckBy.locked': 'Status check: locked (asked by {actor})',
  'event.statusCheckBy.unlocked': 'Status check: unlocked (asked by {actor})',
  'event.oneTouch': 'Locked with One-Touch',
  'event.oneTouchKeypad': 'Locked with One-Touch at the keypad',
  'event.locked.manual': 'Locked by hand',
  'event.unlocked.manual': 'Unlocked by hand',
  'event.locked.masterPin': 'Locked with the master PIN',
  'event.unlocked.masterPin': 'Unlocked with the master PIN',
  'event.locked.masterPinKeypad': 'Locked with the master PIN at the keypad',
  'event.unlocked.masterPinKeypad': 'Unlocked with the master PIN at the keypad',
  'event.locked.keypadBy': 'Locked by {actor} at the keypad',
  'event.unlocked.keypadBy': 'Unlocked by {actor} at the keypad',
  'event.locked.remoteBy': 'Locked remotely by {actor}',
  'event.unlocked.remoteBy': 'Unlocked remotely by {actor}',
  'event.locked.remote': 'Locked remotely',
  'event.unlocked.remote': 'Unlocked remotely',
  'event.locked.keypad': 'Locked at the keypad',
  'event.unlocked.keypad': 'Unlocked at the keypad',
  'event.someone': 'someone',
  'event.someoneSubject': 'someone',
  'event.pinUser': 'a PIN user',
  'event.door.open': 'Door opened',
  'event.door.closed': 'Door closed',
  'event.door.ajar': 'Door ajar',
  'event.door.init': 'Door sensor starting up',
  'event.door.unknown': 'Door state unknown',
  'event.battery.lockOk': 'Lock battery OK',
  'event.battery.lock2week': 'Lock battery low: about 2 weeks left',
  'event.battery.lock1week': 'Lock battery low: about 1 week left',
  'event.battery.lock2day': 'Lock battery very low: about 2 days left, replace it soon',
  'event.battery.lockLow': 'Lock battery low',
  'event.battery.lockCritical': 'Lock battery critical: replace the batteries now',
  'event.battery.keypadOk': 'Keypad battery OK',
  'event.battery.keypadLow': 'Keypad battery low',
  'event.battery.keypadCritical': 'Keypad battery critical: replace the batteries now',
  'event.online': 'Bridge online',
  'event.offline': 'Bridge offline: the lock cannot be reached remotely',
  'event.renamed': 'Renamed to "{name}"',
  'event.renamedBy': 'Renamed to "{name}" by {actor}',
  'event.privacyOn': 'Privacy mode on: PINs do not unlock',
  'event.privacyOff': 'Privacy mode off',
  'event.vacationOn': 'Vacation mode on',
  'event.vacationOff': 'Vacation mode off',
  'event.keypadOn': 'Keypad enabled',
  'event.keypadOff': 'Keypad disabled',
  'event.masterPinChanged': 'Master PIN changed',
  'event.pin.load': 'PIN added',
  'event.pin.enable': 'PIN enabled',
  'event.pin.disable': 'PIN disabled',
  'event.pin.delete': 'PIN deleted',
  'event.pin.update': 'PIN changed',
  'event.pin.other': 'PIN {state}',
  'event.pinFor.load': 'PIN added for {owner}',
  'event.pinFor.enable': 'PIN enabled for {owner}',
  'event.pinFor.disable': 'PIN disabled for {owner}',
  'event.pinFor.delete': 'PIN deleted for {owner}',
  'event.pinFor.update': 'PIN changed for {owner}',
  'event.pinFor.other': 'PIN {state} for {owner}',
  'event.withSchedule': '{line} ({schedule})',
  'event.withActor': '{line} by {actor}',
  'event.access.added': '{actor} was given access',
  'event.access.removed': '{actor} no longer has access',
  'event.access.owner': '{actor} is now an owner',
  'event.access.guest': '{actor} is now a guest',
  'event.access.always': '{actor} now has access at all times',
  'event.access.temporary': '{actor} now has temporary access',
  'event.access.recurring': '{actor} now has access on a schedule',
  'event.access.changed': '{actor} now has different access',
  'event.clockDrift': 'The lock reported a wrong time (clock drift): check its batteries',
  'event.doorbellPress': 'Doorbell pressed',
  'event.motion': 'Motion detected',
  'event.motionAt': 'Motion at {device}',
  'event.recording': 'Recording available',
  'event.recordingPress': 'Recording available (doorbell press)',
  'event.recordingMotion': 'Recording available (motion)',
  'event.accountDeleted': 'The Lock Access account was deleted: the plugin unlinked it',
} as const;

export type EventCode = keyof typeof EVENT_MESSAGES;

export const eventMessage = messageCatalog(EVENT_MESSAGES);

/** Whether this version's catalog has the code (an entry a later version wrote may name one it lacks). */
export function isEventCode(code: string): code is EventCode {
  return Object.hasOwn(EVENT_MESSAGES, code);
}

/** The English sentence of an event line, made again from its code and params. */
export function eventText(code: EventCode, params: MessageParams): string {
  return eventMessage(code, params).text;
}

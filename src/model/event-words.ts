// Plain-words lines for the event log: what happened, said the way a Homebridge user would say it.
// Pure: no clock, no I/O. The time is shown beside the line by the UI, so it is not part of the words.
import type { Actor, DeviceEvent } from './events.js';
import type { MessageParam, MessageParams, UiMessage } from '../util/ui-message.js';
import { batteryWord } from './battery-words.js';
import { eventMessage, type EventCode } from './event-messages.js';

/** "Jane Doe", or undefined when the callback names nobody. */
function personName(actor: Actor | undefined): string | undefined {
  if (!actor) return undefined;
  const name = [actor.firstName, actor.lastName]
    .filter((part): part is string => typeof part === 'string' && part.trim() !== '' && part !== 'n/a')
    .join(' ')
    .trim();
  return name === '' ? undefined : name;
}

/**
 * The person an event is about, for the event log's people list and filter: who operated, checked
 * or renamed the lock, whose PIN changed, whose access changed. Reserved actors are not people.
 */
export function eventPerson(event: DeviceEvent, own?: OwnAction): { userId: string; name?: string } | undefined {
  if (own !== undefined) return undefined;
  let actor: Actor | undefined;
  if (event.kind === 'lockState' || event.kind === 'lockName') actor = event.actor;
  else if (event.kind === 'pinManaged') actor = event.pinUser;
  else if (event.kind === 'membership') actor = event.user;
  if (actor?.kind !== 'person' || actor.userId === undefined || actor.userId === '') return undefined;
  const name = personName(actor);
  return name === undefined ? { userId: actor.userId } : { userId: actor.userId, name };
}

/**
 * What the plugin did itself, for an event it caused: the lock callback that follows its own
 * auto-lock (the service names the account the plugin is linked to, who did nothing).
 */
export interface OwnAction {
  /** How long the door had been closed (and the lock unlocked) when the auto-lock was sent. */
  autoLockSeconds: number;
}

export function autoLockWords(closedSeconds: number): string {
  return eventMessage('event.autoLock', { seconds: closedSeconds }).text;
}

/** An event's line as a message: its code, and the names and numbers it shows. */
export type EventLine = UiMessage;

/** A person's name, or the word for someone the callback does not name. */
function actorParam(actor: Actor | undefined, unnamed: 'event.someone' | 'event.someoneSubject' | 'event.pinUser' = 'event.someone'): MessageParam {
  return personName(actor) ?? eventMessage(unnamed);
}

const PIN_STATES = new Set(['load', 'enable', 'disable', 'delete', 'update']);

const ACCESS_CODES: Record<string, EventCode> = {
  rule_access_always: 'event.access.always',
  rule_access_temporary: 'event.access.temporary',
  rule_access_recurring: 'event.access.recurring',
};

const LOCK_BATTERY_CODES: Record<string, EventCode> = {
  lock_state_battery_warning_none: 'event.battery.lockOk',
  lock_state_battery_warning_2week: 'event.battery.lock2week',
  lock_state_battery_warning_1week: 'event.battery.lock1week',
  lock_state_battery_warning_2day: 'event.battery.lock2day',
};

function batteryLine(device: 'lock' | 'keypad', raw: string): EventLine {
  const word = batteryWord(raw);
  const exact = device === 'lock' ? LOCK_BATTERY_CODES[raw] : undefined;
  if (exact !== undefined) return eventMessage(exact);
  const warning = word === undefined ? 'none' : word.warning;
  if (device === 'lock') return eventMessage(warning === 'none' ? 'event.battery.lockOk' : warning === 'critical' ? 'event.battery.lockCritical' : 'event.battery.lockLow');
  return eventMessage(warning === 'none' ? 'event.battery.keypadOk' : warning === 'critical' ? 'event.battery.keypadCritical' : 'event.battery.keypadLow');
}

function lockStateLine(event: Extract<DeviceEvent, { kind: 'lockState' }>): EventLine {
  if (event.source === 'status') {
    const checker = personName(event.actor);
    return checker === undefined ? eventMessage(`event.statusCheck.${event.state}`) : eventMessage(`event.statusCheckBy.${event.state}`, { actor: checker });
  }
  const keypad = event.device === 'keypad';
  const verb = event.state;
  switch (event.actor.kind) {
    case 'oneTouch':
      return eventMessage(keypad ? 'event.oneTouchKeypad' : 'event.oneTouch');
    case 'manual':
      return eventMessage(`event.${verb}.manual`);
    case 'masterPin':
      return eventMessage(keypad ? `event.${verb}.masterPinKeypad` : `event.${verb}.masterPin`);
    case 'person':
      if (keypad) return eventMessage(`event.${verb}.keypadBy`, { actor: actorParam(event.actor, 'event.pinUser') });
      // The app, the API, or Apple Home through this plugin: the service says which account, not which.
      return eventMessage(`event.${verb}.remoteBy`, { actor: actorParam(event.actor) });
    default:
      // Not turned by hand (that has its own actor), so remotely, or at the keypad.
      return eventMessage(keypad ? `event.${verb}.keypad` : `event.${verb}.remote`);
  }
}

function pinLine(event: Extract<DeviceEvent, { kind: 'pinManaged' }>): EventLine {
  if (event.masterPin) return eventMessage('event.masterPinChanged');
  const known = PIN_STATES.has(event.state);
  const owner = personName(event.pinUser);
  const params: MessageParams = known ? {} : { state: event.state };
  const state = known ? event.state as 'load' : 'other';
  let line = owner === undefined ? eventMessage(`event.pin.${state}`, params) : eventMessage(`event.pinFor.${state}`, { ...params, owner });
  if (event.schedule) line = eventMessage('event.withSchedule', { line, schedule: event.schedule });
  const by = personName(event.actor);
  if (by !== undefined && by !== owner) line = eventMessage('event.withActor', { line, actor: by });
  return line;
}

function membershipLine(event: Extract<DeviceEvent, { kind: 'membership' }>): EventLine {
  const actor = actorParam(event.user, 'event.someoneSubject');
  switch (event.change) {
    case 'added':
      return eventMessage('event.access.added', { actor });
    case 'removed':
      return eventMessage('event.access.removed', { actor });
    case 'userType':
      return eventMessage(event.value === 'superuser' ? 'event.access.owner' : 'event.access.guest', { actor });
    default:
      return eventMessage(ACCESS_CODES[event.value ?? ''] ?? 'event.access.changed', { actor });
  }
}

function configFlagLine(event: Extract<DeviceEvent, { kind: 'configFlag' }>): EventLine {
  switch (event.flag) {
    case 'privacyMode':
      return eventMessage(event.value ? 'event.privacyOn' : 'event.privacyOff');
    case 'vacationMode':
      return eventMessage(event.value ? 'event.vacationOn' : 'event.vacationOff');
    default:
      return eventMessage(event.value ? 'event.keypadOn' : 'event.keypadOff');
  }
}

/** One event's line as a message, e.g. `event.unlocked.keypadBy` with the person's name. */
export function eventLine(event: DeviceEvent, deviceName: string, own?: OwnAction): EventLine {
  if (own !== undefined && event.kind === 'lockState') return eventMessage('event.autoLock', { seconds: own.autoLockSeconds });
  switch (event.kind) {
    case 'lockState':
      return lockStateLine(event);
    case 'doorState':
      return eventMessage(`event.door.${event.state}`);
    case 'battery':
      return batteryLine(event.device, event.raw);
    case 'online':
      return eventMessage(event.online ? 'event.online' : 'event.offline');
    case 'lockName': {
      const by = personName(event.actor);
      return by === undefined ? eventMessage('event.renamed', { name: event.name }) : eventMessage('event.renamedBy', { name: event.name, actor: by });
    }
    case 'configFlag':
      return configFlagLine(event);
    case 'pinManaged':
      return pinLine(event);
    case 'membership':
      return membershipLine(event);
    case 'clockDrift':
      return eventMessage('event.clockDrift');
    case 'doorbellPress':
      return eventMessage('event.doorbellPress');
    case 'motion':
      return deviceName.trim() === '' ? eventMessage('event.motion') : eventMessage('event.motionAt', { device: deviceName });
    case 'videoAvailable':
      if (event.cause === 'buttonpush') return eventMessage('event.recordingPress');
      if (event.cause === 'doorbell_motion_detected') return eventMessage('event.recordingMotion');
      return eventMessage('event.recording');
    case 'accountDeleted':
      return eventMessage('event.accountDeleted');
  }
}

/** One line for one event in English, e.g. "Unlocked by Jane Doe at the keypad". */
export function describeEvent(event: DeviceEvent, deviceName: string, own?: OwnAction): string {
  return eventLine(event, deviceName, own).text;
}

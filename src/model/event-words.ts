// Plain-words lines for the event log: what happened, said the way a Homebridge user would say it.
// Pure: no clock, no I/O. The time is shown beside the line by the UI, so it is not part of the words.
import type { Actor, DeviceEvent } from './events.js';
import { batteryWord } from './battery-words.js';

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
  return `Locked by auto-lock (the door was closed for ${closedSeconds} s)`;
}

function who(actor: Actor | undefined): string {
  return personName(actor) ?? 'someone';
}


const PIN_WORDS: Record<string, string> = {
  load: 'PIN added',
  disable: 'PIN disabled',
  enable: 'PIN enabled',
  delete: 'PIN deleted',
  update: 'PIN changed',
};

const ACCESS_WORDS: Record<string, string> = {
  rule_access_always: 'access at all times',
  rule_access_temporary: 'temporary access',
  rule_access_recurring: 'access on a schedule',
};

function batteryWords(device: 'lock' | 'keypad', raw: string): string {
  const word = batteryWord(raw);
  if (device === 'lock' && word?.words !== undefined) return word.words;
  const label = device === 'lock' ? 'Lock battery' : 'Keypad battery';
  if (word === undefined || word.warning === 'none') return `${label} OK`;
  if (word.warning === 'critical') return `${label} critical: replace the batteries now`;
  return `${label} low`;
}

function lockStateWords(event: Extract<DeviceEvent, { kind: 'lockState' }>): string {
  const verb = event.state === 'locked' ? 'Locked' : 'Unlocked';
  if (event.source === 'status') {
    const checker = personName(event.actor);
    return `Status check: ${event.state}${checker ? ` (asked by ${checker})` : ''}`;
  }
  const where = event.device === 'keypad' ? ' at the keypad' : '';
  switch (event.actor.kind) {
    case 'oneTouch':
      return `Locked with One-Touch${where}`;
    case 'manual':
      return `${verb} by hand`;
    case 'masterPin':
      return `${verb} with the master PIN${where}`;
    case 'person': {
      const name = personName(event.actor);
      if (event.device === 'keypad') return `${verb} by ${name ?? 'a PIN user'} at the keypad`;
      // The app, the API, or Apple Home through this plugin: the service says which account, not which.
      return `${verb} remotely by ${name ?? 'someone'}`;
    }
    default:
      // Not turned by hand (that has its own actor), so remotely, or at the keypad.
      return `${verb}${where === '' ? ' remotely' : where}`;
  }
}

/** One line for one event, e.g. "Unlocked by Jane Doe at the keypad". */
export function describeEvent(event: DeviceEvent, deviceName: string, own?: OwnAction): string {
  if (own !== undefined && event.kind === 'lockState') return autoLockWords(own.autoLockSeconds);
  switch (event.kind) {
    case 'lockState':
      return lockStateWords(event);
    case 'doorState':
      switch (event.state) {
        case 'open':
          return 'Door opened';
        case 'closed':
          return 'Door closed';
        case 'ajar':
          return 'Door ajar';
        case 'init':
          return 'Door sensor starting up';
        default:
          return 'Door state unknown';
      }
    case 'battery':
      return batteryWords(event.device, event.raw);
    case 'online':
      return event.online ? 'Bridge online' : 'Bridge offline: the lock cannot be reached remotely';
    case 'lockName': {
      const by = personName(event.actor);
      return `Renamed to "${event.name}"${by ? ` by ${by}` : ''}`;
    }
    case 'configFlag':
      switch (event.flag) {
        case 'privacyMode':
          return event.value ? 'Privacy mode on: PINs do not unlock' : 'Privacy mode off';
        case 'vacationMode':
          return event.value ? 'Vacation mode on' : 'Vacation mode off';
        default:
          return event.value ? 'Keypad enabled' : 'Keypad disabled';
      }
    case 'pinManaged': {
      if (event.masterPin) return 'Master PIN changed';
      const what = PIN_WORDS[event.state] ?? `PIN ${event.state}`;
      const owner = personName(event.pinUser);
      const by = personName(event.actor);
      return `${what}${owner ? ` for ${owner}` : ''}${event.schedule ? ` (${event.schedule})` : ''}${by && by !== owner ? ` by ${by}` : ''}`;
    }
    case 'membership': {
      const name = who(event.user);
      switch (event.change) {
        case 'added':
          return `${name} was given access`;
        case 'removed':
          return `${name} no longer has access`;
        case 'userType':
          return event.value === 'superuser' ? `${name} is now an owner` : `${name} is now a guest`;
        default:
          return `${name} now has ${ACCESS_WORDS[event.value ?? ''] ?? 'different access'}`;
      }
    }
    case 'clockDrift':
      return 'The lock reported a wrong time (clock drift): check its batteries';
    case 'doorbellPress':
      return 'Doorbell pressed';
    case 'motion':
      return deviceName.trim() === '' ? 'Motion detected' : `Motion at ${deviceName}`;
    case 'videoAvailable':
      if (event.cause === 'buttonpush') return 'Recording available (doorbell press)';
      if (event.cause === 'doorbell_motion_detected') return 'Recording available (motion)';
      return 'Recording available';
    case 'accountDeleted':
      return 'The Lock Access account was deleted: the plugin unlinked it';
  }
}

// Plain words for a device event, for the log and the state's recent-events list.
import type { Actor, DoorbellEvent, LockEvent } from './events.js';

function person(actor: Actor | undefined): string | undefined {
  if (!actor) return undefined;
  switch (actor.kind) {
    case 'person': {
      const name = [actor.firstName, actor.lastName].filter((part) => part !== undefined && part !== '' && part !== 'n/a').join(' ');
      return name === '' ? 'a user' : name;
    }
    case 'manual':
      return 'hand';
    case 'doorSensor':
      return 'the door sensor';
    case 'oneTouch':
      return 'One-Touch Lock';
    case 'masterPin':
      return 'the master PIN';
    case 'unknown':
      return undefined;
  }
}

export function describeLockEvent(event: LockEvent): string {
  switch (event.kind) {
    case 'lockState': {
      const verb = event.state === 'locked' ? 'locked' : 'unlocked';
      if (event.source === 'status') return `reports it is ${verb}`;
      const who = person(event.actor);
      const by = who === undefined ? '' : ` by ${who}`;
      return `${verb}${by}${event.device === 'keypad' && event.actor.kind === 'person' ? ' at the keypad' : ''}`;
    }
    case 'doorState':
      return event.state === 'init' || event.state === 'unknown' ? `door sensor reports "${event.state}"` : `door ${event.state}`;
    case 'battery':
      return `${event.device === 'keypad' ? 'keypad' : 'lock'} battery ${event.low ? 'low' : 'fine'} (${event.level}%)`;
    case 'online':
      return event.online ? 'Wi-Fi bridge online' : 'Wi-Fi bridge offline';
    case 'lockName':
      return `renamed to "${event.name}"`;
    case 'configFlag': {
      const words = { privacyMode: 'privacy mode', vacationMode: 'vacation mode', keypadEnabled: 'keypad' } as const;
      const on = event.flag === 'keypadEnabled' ? (event.value ? 'enabled' : 'disabled') : event.value ? 'on' : 'off';
      return `${words[event.flag]} ${on}`;
    }
    case 'pinManaged': {
      const owner = event.masterPin ? 'master PIN' : `PIN of ${person(event.pinUser) ?? 'a user'}`;
      return `${owner}: ${event.state}`;
    }
    case 'membership': {
      const who = person(event.user) ?? 'a user';
      if (event.change === 'added') return `${who} was given access`;
      if (event.change === 'removed') return `${who} was removed`;
      return `${who}: ${event.change === 'userType' ? 'role' : 'access'} changed${event.value === undefined ? '' : ` to ${event.value}`}`;
    }
    case 'clockDrift':
      return 'the lock\'s clock drifted (check its batteries)';
  }
}

export function describeDoorbellEvent(event: DoorbellEvent): string {
  switch (event.kind) {
    case 'doorbellPress':
      return 'doorbell pressed';
    case 'motion':
      return 'motion detected';
    case 'videoAvailable':
      return `recording available (${event.cause === 'buttonpush' ? 'doorbell press' : 'motion'})`;
  }
}

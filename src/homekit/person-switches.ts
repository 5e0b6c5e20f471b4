// One StatelessProgrammableSwitch per configured person on a lock accessory, labelled by
// a ServiceLabel so Home lists them in order: single press when that person unlocks the lock,
// double press when they lock it. Switches of people no longer configured are pruned.
import type { API, PlatformAccessory, Service } from 'homebridge';

import { personSubtype, type Person, type Press } from '../model/person-triggers.js';
import { ensureService, findService } from './services.js';

const SUBTYPE_PREFIX = personSubtype('');

export function isPersonSwitch(api: API, service: Service): boolean {
  return service.UUID === api.hap.Service.StatelessProgrammableSwitch.UUID && typeof service.subtype === 'string' && service.subtype.startsWith(SUBTYPE_PREFIX);
}

export function convergePersonSwitches(api: API, accessory: PlatformAccessory, people: readonly Person[]): void {
  const { Service: S, Characteristic: C } = api.hap;
  ensureService(accessory, S.ServiceLabel, people.length > 0, `${accessory.displayName} People`)?.updateCharacteristic(
    C.ServiceLabelNamespace,
    C.ServiceLabelNamespace.ARABIC_NUMERALS,
  );
  const wanted = new Set(people.map((person) => personSubtype(person.userId)));
  for (const service of [...accessory.services]) {
    if (isPersonSwitch(api, service) && !wanted.has(service.subtype ?? '')) accessory.removeService(service);
  }
  for (const [index, person] of people.entries()) {
    const service = ensureService(accessory, S.StatelessProgrammableSwitch, true, person.name, personSubtype(person.userId));
    if (!service) continue;
    // Unlock and lock only: Home offers no "long press" for these.
    service.getCharacteristic(C.ProgrammableSwitchEvent).setProps({ validValues: [C.ProgrammableSwitchEvent.SINGLE_PRESS, C.ProgrammableSwitchEvent.DOUBLE_PRESS] });
    service.updateCharacteristic(C.ServiceLabelIndex, Math.min(index + 1, 255));
    // Home shows ConfiguredName for services that are not primary; HAP does not list it as optional
    // here. Added once: HAP keeps every template it is handed, and this runs on every converge.
    if (!service.optionalCharacteristics.some((template) => template.UUID === C.ConfiguredName.UUID)) service.addOptionalCharacteristic(C.ConfiguredName);
    // Renamed only when the config's name changes, so a name given in the Home app stays.
    if (!service.testCharacteristic(C.ConfiguredName) || service.getCharacteristic(C.Name).value !== person.name) {
      service.updateCharacteristic(C.Name, person.name);
      service.updateCharacteristic(C.ConfiguredName, person.name);
    }
  }
}

/** Sends the event to subscribed controllers (Home runs the automations). */
export function pressPersonSwitch(api: API, accessory: PlatformAccessory, userId: string, press: Press): boolean {
  const { Service: S, Characteristic: C } = api.hap;
  const service = findService(accessory, S.StatelessProgrammableSwitch, personSubtype(userId));
  if (!service) return false;
  const value = press === 'single' ? C.ProgrammableSwitchEvent.SINGLE_PRESS : C.ProgrammableSwitchEvent.DOUBLE_PRESS;
  // An event, not a state: sendEventNotification notifies even when the value is unchanged.
  service.getCharacteristic(C.ProgrammableSwitchEvent).sendEventNotification(value);
  return true;
}

// One StatelessProgrammableSwitch per configured person on a lock accessory, labelled by
// a ServiceLabel so Home lists them in order: single press when that person unlocks the lock,
// double press when they lock it. Switches of people no longer configured are not bound, so the
// lock accessory removes them.
import type { API, PlatformAccessory, Service } from 'homebridge';

import { personSubtype, type Press } from '../model/person-triggers.js';
import { acquireService, findService } from './services.js';

/** Binds one person's switch and the label service that orders them; returns both. */
export function bindPersonSwitch(api: API, accessory: PlatformAccessory, person: { userId: string; name: string; index: number }): Service[] {
  const { Service: S, Characteristic: C } = api.hap;
  const label = acquireService(accessory, S.ServiceLabel, `${accessory.displayName} People`);
  label.updateCharacteristic(C.ServiceLabelNamespace, C.ServiceLabelNamespace.ARABIC_NUMERALS);
  const service = acquireService(accessory, S.StatelessProgrammableSwitch, person.name, personSubtype(person.userId));
  // Unlock and lock only: Home offers no "long press" for these.
  service.getCharacteristic(C.ProgrammableSwitchEvent).setProps({ validValues: [C.ProgrammableSwitchEvent.SINGLE_PRESS, C.ProgrammableSwitchEvent.DOUBLE_PRESS] });
  service.updateCharacteristic(C.ServiceLabelIndex, Math.min(person.index, 255));
  // Home shows ConfiguredName for services that are not primary; HAP does not list it as optional
  // here. Added once: HAP keeps every template it is handed, and this runs on every converge.
  if (!service.optionalCharacteristics.some((template) => template.UUID === C.ConfiguredName.UUID)) service.addOptionalCharacteristic(C.ConfiguredName);
  // Renamed only when the config's name changes, so a name given in the Home app stays.
  if (!service.testCharacteristic(C.ConfiguredName) || service.getCharacteristic(C.Name).value !== person.name) {
    service.updateCharacteristic(C.Name, person.name);
    service.updateCharacteristic(C.ConfiguredName, person.name);
  }
  return [service, label];
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

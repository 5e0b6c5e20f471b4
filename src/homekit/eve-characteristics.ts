// Eve's own service and characteristics for door history, built from HAP's generic classes so the
// same code runs on HAP-NodeJS 0.x (Homebridge 1) and 2.x (Homebridge 2). UUIDs, formats and
// permissions are the ones Eve devices publish (public in several Homebridge plugins).
import type { API, Characteristic, CharacteristicProps, PlatformAccessory, Service } from 'homebridge';

type Hap = API['hap'];

export const EVE_HISTORY_SERVICE_UUID = 'E863F007-079E-48FF-8F27-9C2605A29F52';

interface EveCharacteristic {
  name: string;
  uuid: string;
  props: (hap: Hap) => CharacteristicProps;
}

const data = (hap: Hap, perms: CharacteristicProps['perms']): CharacteristicProps => ({ format: hap.Formats.DATA, perms });
const seconds = (hap: Hap, perms: CharacteristicProps['perms']): CharacteristicProps => ({ format: hap.Formats.UINT32, unit: hap.Units.SECONDS, perms });

/** On the history service. */
export const HISTORY_STATUS: EveCharacteristic = { name: 'Eve History Status', uuid: 'E863F116-079E-48FF-8F27-9C2605A29F52', props: (hap) => data(hap, [hap.Perms.PAIRED_READ, hap.Perms.NOTIFY, hap.Perms.HIDDEN]) };
export const HISTORY_ENTRIES: EveCharacteristic = { name: 'Eve History Entries', uuid: 'E863F117-079E-48FF-8F27-9C2605A29F52', props: (hap) => data(hap, [hap.Perms.PAIRED_READ, hap.Perms.NOTIFY, hap.Perms.HIDDEN]) };
export const HISTORY_REQUEST: EveCharacteristic = { name: 'Eve History Request', uuid: 'E863F11C-079E-48FF-8F27-9C2605A29F52', props: (hap) => data(hap, [hap.Perms.PAIRED_WRITE, hap.Perms.HIDDEN]) };
export const SET_TIME: EveCharacteristic = { name: 'Eve Set Time', uuid: 'E863F121-079E-48FF-8F27-9C2605A29F52', props: (hap) => data(hap, [hap.Perms.PAIRED_WRITE, hap.Perms.HIDDEN]) };
/** Eve's reset button for the opening count: seconds since 2001 when it was tapped. */
export const RESET_TOTAL: EveCharacteristic = { name: 'Eve Reset Total', uuid: 'E863F112-079E-48FF-8F27-9C2605A29F52', props: (hap) => seconds(hap, [hap.Perms.PAIRED_READ, hap.Perms.NOTIFY, hap.Perms.PAIRED_WRITE]) };

/** On the contact sensor. */
export const LAST_ACTIVATION: EveCharacteristic = { name: 'Eve Last Activation', uuid: 'E863F11A-079E-48FF-8F27-9C2605A29F52', props: (hap) => seconds(hap, [hap.Perms.PAIRED_READ, hap.Perms.NOTIFY]) };
export const TIMES_OPENED: EveCharacteristic = {
  name: 'Eve Times Opened',
  uuid: 'E863F129-079E-48FF-8F27-9C2605A29F52',
  props: (hap) => ({ format: hap.Formats.UINT32, perms: [hap.Perms.PAIRED_READ, hap.Perms.NOTIFY] }),
};

/**
 * The characteristic on `service`, added when missing. Found by UUID: after a restart Homebridge
 * restores it from its cache as a plain Characteristic.
 */
export function acquireEveCharacteristic(hap: Hap, service: Service, type: EveCharacteristic): Characteristic {
  const existing = service.characteristics.find((c) => c.UUID === type.uuid);
  if (existing) return existing;
  return service.addCharacteristic(new hap.Characteristic(type.name, type.uuid, type.props(hap)));
}

export function findEveHistoryService(accessory: PlatformAccessory): Service | undefined {
  return accessory.services.find((service) => service.UUID === EVE_HISTORY_SERVICE_UUID);
}

export function acquireEveHistoryService(hap: Hap, accessory: PlatformAccessory, name: string): Service {
  return findEveHistoryService(accessory) ?? accessory.addService(new hap.Service(name, EVE_HISTORY_SERVICE_UUID));
}

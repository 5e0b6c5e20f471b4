// Find and get-or-create for services: a view binds what a device has, on a cached accessory too.
import type { Characteristic, CharacteristicValue, PlatformAccessory, Service, WithUUID } from 'homebridge';

/** A concrete HAP service class such as `hap.Service.LockMechanism`. */
export type ServiceType = WithUUID<new (displayName?: string, subtype?: string) => Service>;

/** Exact match: a service without subtype is never confused with a same-typed one that has a subtype. */
export function findService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): Service | undefined {
  return accessory.services.find((service) => service.UUID === type.UUID && (service.subtype === '' ? undefined : service.subtype) === subtype);
}

/** Every service of this type, whatever its subtype (a camera controller's, say). */
export function servicesOfType(accessory: PlatformAccessory, type: ServiceType): Service[] {
  return accessory.services.filter((service) => service.UUID === type.UUID);
}

/** The service of this type (and subtype), created with `name` when the cached accessory lacks it. */
export function acquireService(accessory: PlatformAccessory, type: ServiceType, name: string, subtype?: string): Service {
  const existing = findService(accessory, type, subtype);
  if (existing) return existing;
  // HAP adds a service without subtype only while no other of its type exists (a lock's door sensor
  // after its "Left Open" sensor): those step aside and come back, the same objects with their handlers.
  const siblings = subtype === undefined ? accessory.services.filter((service) => service.UUID === type.UUID) : [];
  for (const sibling of siblings) accessory.removeService(sibling);
  const added = accessory.addService(new type(name, subtype));
  for (const sibling of siblings) accessory.addService(sibling);
  return added;
}

/**
 * Makes `service` the accessory's primary service. HAP counts every setPrimaryService call as a
 * change of the accessory's configuration, repeats included, and each change makes it serialize and
 * hash the whole bridge a second later; HAP's DoorbellController repeats the call on every camera
 * set-up. So on this service a call that would change nothing is left out.
 */
export function keepPrimary(service: Service): void {
  if (!service.isPrimaryService) service.setPrimaryService(true);
  if (Object.hasOwn(service, 'setPrimaryService')) return;
  const setPrimary = service.setPrimaryService.bind(service);
  service.setPrimaryService = (isPrimary = true) => {
    if (service.isPrimaryService !== isPrimary) setPrimary(isPrimary);
  };
}

/**
 * Shows a value that may be the one already shown. HAP tells controllers of a changed value only,
 * so an unchanged one is left alone: that spares HAP's chain of change events on every repeated
 * report. (A read error left behind while a lock was offline is cleared by the read guard.)
 */
export function showValue(characteristic: Characteristic, value: CharacteristicValue): void {
  if (characteristic.value !== value) characteristic.updateValue(value);
}

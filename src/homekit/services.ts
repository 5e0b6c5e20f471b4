// Get-or-create and prune for services, so a cached accessory converges to what config and state say.
import type { PlatformAccessory, Service, WithUUID } from 'homebridge';

/** A concrete HAP service class such as `hap.Service.LockMechanism`. */
export type ServiceType = WithUUID<new (displayName?: string, subtype?: string) => Service>;

/** Exact match: a service without subtype is never confused with a same-typed one that has a subtype. */
export function findService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): Service | undefined {
  return accessory.services.find((service) => service.UUID === type.UUID && (service.subtype === '' ? undefined : service.subtype) === subtype);
}

/** The service of this type (and subtype), created with `name` when the cached accessory lacks it. */
export function acquireService(accessory: PlatformAccessory, type: ServiceType, name: string, subtype?: string): Service {
  const existing = findService(accessory, type, subtype);
  if (existing) return existing;
  return accessory.addService(new type(name, subtype));
}

/** Removes the service of this type (and subtype) when it is no longer wanted. Returns whether one was removed. */
export function pruneService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): boolean {
  const existing = findService(accessory, type, subtype);
  if (!existing) return false;
  accessory.removeService(existing);
  return true;
}

/** Acquires when wanted, prunes otherwise; returns the service when it exists afterwards. */
export function ensureService(accessory: PlatformAccessory, type: ServiceType, wanted: boolean, name: string, subtype?: string): Service | undefined {
  if (wanted) return acquireService(accessory, type, name, subtype);
  pruneService(accessory, type, subtype);
  return undefined;
}

// Which Matter endpoints a device has and what they show, as plain data: the publisher
// turns a plan into a Homebridge MatterAccessory and pushes the `state` part whenever it changes.
import { doorbellParts } from '../model/doorbell-parts.js';
import { lockParts, type PartsEntry } from '../model/lock-parts.js';
import type { LockState } from '../model/lock-state.js';
import {
  doorAttributes,
  doorLockAttributes,
  occupancyAttributes,
  powerSourceAttributes,
} from './matter-attributes.js';
import { matterLabel, matterSerial, matterUuidSeed, type MatterPart } from './matter-identity.js';

/** The Matter device type of an endpoint, by Homebridge's `api.matter.deviceTypes` name. */
export type MatterDeviceKind = 'DoorLock' | 'ContactSensor' | 'GenericSwitch' | 'MotionSensor';

/** Attribute values by cluster name (Homebridge's `clusterNames` spelling). */
export type ClusterValues = Record<string, Record<string, unknown>>;

export interface EndpointPlan {
  /** Seed of the endpoint's UUID; stable for as long as the endpoint keeps its clusters. */
  seed: string;
  /** `lock:<id>` or `doorbell:<id>`: the device the endpoint belongs to. */
  device: string;
  deviceType: MatterDeviceKind;
  label: string;
  serial: string;
  model: string;
  /** Attributes set once at registration (configuration, not state). */
  fixed: ClusterValues;
  /** Attributes that follow the device state; the first cluster confirms a registration. */
  state: ClusterValues;
  /** BridgedDeviceBasicInformation.reachable: false while the lock's bridge is offline. */
  reachable: boolean;
}

/** A lock's entry (its settings decide its parts) with the name the views show. */
export interface MatterLockView extends PartsEntry {
  id: string;
  /** The name HomeKit shows (config, discovery or lock_name_changed). */
  name: string;
}

export interface MatterDoorbellView {
  id: string;
  name: string;
}

/** DoorLock.LockType DeadBolt; Homebridge's DoorLock needs type, actuator and operating mode up front. */
const DOOR_LOCK_FIXED = { lockType: 0, actuatorEnabled: true, operatingMode: 0 };

/** A momentary button with a released (0) and a pressed (1) position. */
const SWITCH_FIXED = { numberOfPositions: 2, currentPosition: 0 };

function deviceKey(kind: 'lock' | 'doorbell', id: string): string {
  return `${kind}:${id}`;
}

function identity(kind: 'lock' | 'doorbell', id: string, name: string, part?: MatterPart, seedPart?: string) {
  return {
    seed: matterUuidSeed(kind, id, seedPart ?? part),
    device: deviceKey(kind, id),
    label: matterLabel(name, part),
    serial: matterSerial(id, part),
  };
}

/**
 * A lock's parts (the model's rule) as endpoints: the mechanism a DoorLock carrying the lock battery
 * as its PowerSource, the door a ContactSensor. Without a mechanism (door sensor only) the
 * ContactSensor carries the battery instead (another UUID: Homebridge keeps a cached endpoint's
 * clusters, so an endpoint that gains a cluster must be a new one). The other parts (management,
 * keypad battery, alerts, people) have no Matter binding.
 */
export function lockEndpoints(view: MatterLockView, state: LockState): EndpointPlan[] {
  const plans: EndpointPlan[] = [];
  const battery = { powerSource: { ...powerSourceAttributes(state.battery) } };
  const kinds = new Set(lockParts(view, state, view.name).map((part) => part.kind));
  const doorOnly = !kinds.has('mechanism');
  if (kinds.has('mechanism')) {
    plans.push({
      ...identity('lock', view.id, view.name),
      deviceType: 'DoorLock',
      model: 'Smart Lock',
      fixed: { doorLock: DOOR_LOCK_FIXED },
      state: { doorLock: { ...doorLockAttributes(state) }, ...battery },
      reachable: state.online,
    });
  }
  if (kinds.has('door')) {
    const door = doorAttributes(state);
    plans.push({
      ...identity('lock', view.id, view.name, 'door', doorOnly ? 'door-battery' : undefined),
      deviceType: 'ContactSensor',
      model: 'Door Sensor',
      fixed: {},
      // Until a real position arrives the sensor claims none: it is unreachable, and reads open.
      state: { booleanState: { stateValue: door?.stateValue ?? false }, ...(doorOnly ? battery : {}) },
      reachable: state.online && door !== undefined,
    });
  }
  return plans;
}

/**
 * A doorbell's parts (the model's rule) as endpoints: the button a GenericSwitch (one press per
 * ring), motion a MotionSensor (Matter says it as occupancy). The camera and the chime have no Matter
 * binding (Matter's bridge has no camera; the chime is the plugin's own switch), nor has the
 * recording trigger (HomeKit Secure Video's own).
 */
export function doorbellEndpoints(view: MatterDoorbellView, motion: boolean): EndpointPlan[] {
  return doorbellParts(view.name).flatMap((part): EndpointPlan[] => {
    switch (part.kind) {
      case 'button':
        return [{
          ...identity('doorbell', view.id, view.name),
          deviceType: 'GenericSwitch',
          model: 'Video Doorbell',
          fixed: { switch: SWITCH_FIXED },
          // A press is an event (initialPress, shortRelease), not state: nothing to follow here.
          state: {},
          reachable: true,
        }];
      case 'motion':
        return [{
          ...identity('doorbell', view.id, view.name, 'motion'),
          deviceType: 'MotionSensor',
          model: 'Motion Sensor',
          fixed: {},
          state: { occupancySensing: { ...occupancyAttributes(motion) } },
          reachable: true,
        }];
      case 'camera':
      case 'chime':
      case 'recording':
        return [];
    }
  });
}

/** The cluster that shows whether a registration took: Homebridge has no state for an endpoint that failed. */
export function confirmingCluster(plan: EndpointPlan): string {
  return Object.keys(plan.state)[0] ?? Object.keys(plan.fixed)[0] ?? 'identify';
}

/**
 * What changed between two plans of the same endpoint, by cluster (only changed attributes), and
 * whether reachable or the label changed. Attribute values are compared as JSON (all plain data).
 */
export function planChanges(before: EndpointPlan, after: EndpointPlan): { state: ClusterValues; reachable: boolean; label: boolean } {
  const state: ClusterValues = {};
  for (const [cluster, values] of Object.entries(after.state)) {
    const old = before.state[cluster] ?? {};
    const changed = Object.entries(values).filter(([attribute, value]) => JSON.stringify(old[attribute]) !== JSON.stringify(value));
    if (changed.length > 0) state[cluster] = Object.fromEntries(changed);
  }
  return { state, reachable: before.reachable !== after.reachable, label: before.label !== after.label };
}

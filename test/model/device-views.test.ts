import { describe, expect, it } from 'vitest';

import { Publishers, type DevicePublisher } from '../../src/model/device-views.js';
import type { WantedDevice } from '../../src/model/wanted-device.js';

const wanted: WantedDevice[] = [{ kind: 'lock', id: 'L1', name: 'Front Door', doorSensor: false }];

function recorder(name: string, calls: string[], failing = false): DevicePublisher {
  const note = (what: string) => {
    calls.push(`${name} ${what}`);
    if (failing) throw new Error(`${name} broke`);
  };
  return {
    sync: (devices, sweep) => {
      note(`sync ${devices.map((d) => d.id).join(',')} ${String(sweep)}`);
    },
    remove: (kind, id) => {
      note(`remove ${kind}:${id}`);
    },
    disposeAll: () => {
      note('dispose');
    },
  };
}

function logged() {
  const errors: string[] = [];
  return { errors, log: { info: () => undefined, warn: () => undefined, error: (m: string) => errors.push(m), debug: () => undefined } };
}

describe('every publisher (HomeKit, then Matter) gets the same device set', () => {
  it('sync, remove and dispose reach HomeKit first, then each other publisher', () => {
    const calls: string[] = [];
    const publishers = new Publishers(recorder('homekit', calls), logged().log);
    publishers.add(recorder('matter', calls));
    publishers.sync(wanted, true);
    publishers.remove('lock', 'L1');
    publishers.disposeAll();
    expect(calls).toEqual(['homekit sync L1 true', 'matter sync L1 true', 'homekit remove lock:L1', 'matter remove lock:L1', 'homekit dispose', 'matter dispose']);
  });

  it('a publisher that fails is logged and the others still run', () => {
    const calls: string[] = [];
    const { errors, log } = logged();
    const publishers = new Publishers(recorder('homekit', calls), log);
    publishers.add(recorder('matter', calls, true));
    publishers.add(recorder('other', calls));
    publishers.sync(wanted, false);
    expect(calls).toEqual(['homekit sync L1 false', 'matter sync L1 false', 'other sync L1 false']);
    expect(errors).toEqual(['A device publisher could not show the devices (matter broke); HomeKit is not affected.']);
  });

  it("HomeKit's own failure is not hidden: it reaches the caller, which logs it and tries again later", () => {
    const calls: string[] = [];
    const publishers = new Publishers(recorder('homekit', calls, true), logged().log);
    publishers.add(recorder('matter', calls));
    expect(() => {
      publishers.sync(wanted, true);
    }).toThrow('homekit broke');
  });
});

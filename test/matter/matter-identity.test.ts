import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { cutToBytes, matterLabel, matterSerial, matterUuidSeed } from '../../src/matter/matter-identity.js';

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe('endpoint names within Matter\'s 32 characters', () => {
  it('a device\'s endpoint is labelled with its name; a part with the name, a space and the part', () => {
    expect(matterLabel('Front Door')).toBe('Front Door');
    expect(matterLabel('Front Door', 'door')).toBe('Front Door Door');
    expect(matterLabel('Front Doorbell', 'motion')).toBe('Front Doorbell Motion');
  });

  it('"cut to 32 characters", the part label cut the same way', () => {
    const name = 'The Very Long Garden Gate Lock Name';
    expect(matterLabel(name)).toBe('The Very Long Garden Gate Lock N');
    expect(matterLabel(name, 'door')).toBe('The Very Long Garden Gate Lock N');
    expect(matterLabel('A'.repeat(28), 'door')).toBe(`${'A'.repeat(28)} Doo`);
  });

  it('a cut never leaves a trailing space nor splits a character, and never exceeds 32 UTF-8 bytes', () => {
    expect(matterLabel(`${'x'.repeat(31)} y`)).toBe('x'.repeat(31));
    // Each of these takes four bytes: eight fit.
    expect(matterLabel('🔒'.repeat(10))).toBe('🔒'.repeat(8));
    expect(matterLabel('Schloß Tür Haustür Eingang Süd Nord')).toSatisfy((label: string) => bytes(label) <= 32);
  });

  it('line breaks and control characters become single spaces; an empty result still gets a label', () => {
    expect(matterLabel('Front\nDoor\u001f')).toBe('Front Door');
    expect(matterLabel('   ')).toBe('Lock Access');
    expect(matterLabel(' ', 'motion')).toBe('Motion');
  });

  it('property: any name gives a label of 1 to 32 bytes that starts like the name', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 80 }), fc.constantFrom(undefined, 'door' as const, 'motion' as const), (name, part) => {
        const label = matterLabel(name, part);
        expect(bytes(label)).toBeGreaterThan(0);
        expect(bytes(label)).toBeLessThanOrEqual(32);
        expect(label).toBe(label.trim());
        expect(cutToBytes(label)).toBe(label);
      }),
    );
  });
});

describe('serial numbers at most 32 characters, different between a device\'s endpoints', () => {
  it('short ids keep their id, parts add -door / -motion', () => {
    expect(matterSerial('LOCK-1')).toBe('LOCK-1');
    expect(matterSerial('LOCK-1', 'door')).toBe('LOCK-1-door');
    expect(matterSerial('BELL-1', 'motion')).toBe('BELL-1-motion');
  });

  it('a 32-character lock id stays as it is; its door sensor gets a serial that fits and differs', () => {
    const id = '0123456789ABCDEF0123456789ABCDEF';
    expect(matterSerial(id)).toBe(id);
    const door = matterSerial(id, 'door');
    expect(door.length).toBeLessThanOrEqual(32);
    expect(door).not.toBe(matterSerial(id));
    expect(door.startsWith('0123456789ABCDEF')).toBe(true);
    expect(door.endsWith('-door')).toBe(true);
    // Stable across runs: the same input gives the same serial.
    expect(matterSerial(id, 'door')).toBe(door);
  });

  it('property: serials fit, and differ between ids and between a device\'s endpoints', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }).filter((s) => s.trim() !== ''), fc.string({ minLength: 1, maxLength: 64 }).filter((s) => s.trim() !== ''), (a, b) => {
        const serials = [matterSerial(a), matterSerial(a, 'door'), matterSerial(a, 'motion')];
        for (const serial of serials) expect(bytes(serial)).toBeLessThanOrEqual(32);
        expect(new Set(serials).size).toBe(3);
        if (a !== b) expect(matterSerial(a)).not.toBe(matterSerial(b));
      }),
    );
  });

  it('UUID seeds differ from the HAP accessories\' lock:<id> and doorbell:<id>', () => {
    expect(matterUuidSeed('lock', 'L')).toBe('matter:lock:L');
    expect(matterUuidSeed('lock', 'L', 'door')).toBe('matter:lock:L:door');
    expect(matterUuidSeed('doorbell', 'B', 'motion')).toBe('matter:doorbell:B:motion');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { parseJsonSafely } from '../../src/callbacks/safe-json.js';

/**
 * JSON text of `value`, with some keys written as \u escapes the way a forger might. Built by walking
 * the value, so a string value that looks like a key (`":"`) is never rewritten.
 */
function escapedJson(value: unknown, escapeMask: number): string {
  let i = 0;
  const escapeKey = (key: string) => `"${Array.from(key, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
  const encode = (node: unknown): string => {
    if (Array.isArray(node)) return `[${node.map(encode).join(',')}]`;
    if (node !== null && typeof node === 'object') {
      const members = Object.entries(node).map(([key, child]) => {
        i += 1;
        const written = (escapeMask >> (i % 16)) % 2 === 0 ? JSON.stringify(key) : escapeKey(key);
        return `${written}:${encode(child)}`;
      });
      return `{${members.join(',')}}`;
    }
    return JSON.stringify(node);
  };
  return encode(value);
}

const keys = fc.constantFrom('__proto__', 'constructor', 'prototype', 'LockID', 'Event', 'User', 'a');
const tree = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string(), fc.boolean(), fc.constant(null), tie('object'), fc.array(tie('node'), { maxLength: 3 })),
  object: fc.dictionary(keys, tie('node'), { maxKeys: 4 }),
})).object;

/** The slow reference: every key checked by a reviver. */
function reference(text: string): { polluting: true } | { polluting: false; value: unknown } {
  const seen = { polluting: false };
  const value: unknown = JSON.parse(text, (key, v: unknown) => {
    if (key === '__proto__' || (key === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype'))) seen.polluting = true;
    return v;
  });
  return seen.polluting ? { polluting: true } : { polluting: false, value };
}

describe('400 malformed body: JSON read without prototype keys (parseJsonSafely)', () => {
  it('refuses __proto__ and constructor.prototype keys however they are spelled, and parses the rest exactly', () => {
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 0xffff }), (value, mask) => {
        const text = escapedJson(value, mask);
        const expected = reference(text);
        const got = parseJsonSafely(Buffer.from(text, 'utf8'));
        if (expected.polluting) expect(got).toEqual({ ok: false, reason: 'prototype-key' });
        else expect(got).toEqual({ ok: true, value: expected.value });
      }),
      { numRuns: 500 },
    );
  });

  it('catches an escaped __proto__ key', () => {
    expect(parseJsonSafely(Buffer.from('{"\\u005f_proto__":{"polluted":1}}'))).toEqual({ ok: false, reason: 'prototype-key' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('skips a leading byte order mark and reports broken JSON', () => {
    expect(parseJsonSafely(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonSafely(Buffer.from('{"a":'))).toEqual({ ok: false, reason: 'invalid-json' });
  });
});

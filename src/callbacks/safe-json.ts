// JSON parsing for untrusted callback bodies: keys that could pollute prototypes when the object is
// later merged or spread are refused instead of passed on.

export type SafeJsonResult = { ok: true; value: unknown } | { ok: false; reason: 'invalid-json' | 'prototype-key' };

class PrototypeKeyError extends Error {}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function reviver(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new PrototypeKeyError();
  if (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype')) throw new PrototypeKeyError();
  return value;
}

/**
 * True when the text cannot hold either key: neither name appears literally, and no escape could
 * spell one. Parsing without a reviver is several times faster, and this is every callback.
 */
function plainlySafe(text: string): boolean {
  return !text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u');
}

/** Parses the raw bytes as UTF-8 JSON (a leading BOM is skipped; invalid bytes become U+FFFD). */
export function parseJsonSafely(raw: Buffer): SafeJsonResult {
  const bytes = raw.subarray(0, 3).equals(UTF8_BOM) ? raw.subarray(3) : raw;
  try {
    const text = bytes.toString('utf8');
    return { ok: true, value: (plainlySafe(text) ? JSON.parse(text) : JSON.parse(text, reviver)) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof PrototypeKeyError ? 'prototype-key' : 'invalid-json' };
  }
}

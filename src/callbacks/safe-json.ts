// JSON parsing for untrusted callback bodies: keys that could pollute prototypes when the object is
// later merged or spread are refused instead of passed on.

export type SafeJsonResult = { ok: true; value: unknown } | { ok: false; reason: 'invalid-json' | 'prototype-key' };

class PrototypeKeyError extends Error {}

/** A leading UTF-8 byte order mark, compared byte by byte (no view of the buffer per callback). */
function startsWithBom(raw: Buffer): boolean {
  return raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf;
}

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
  try {
    const text = startsWithBom(raw) ? raw.toString('utf8', 3) : raw.toString('utf8');
    return { ok: true, value: (plainlySafe(text) ? JSON.parse(text) : JSON.parse(text, reviver)) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof PrototypeKeyError ? 'prototype-key' : 'invalid-json' };
  }
}

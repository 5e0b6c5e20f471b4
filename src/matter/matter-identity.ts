// Names and serial numbers of Matter endpoints. Matter caps both at 32 (matter.js
// counts UTF-16 units, the specification UTF-8 bytes): a longer one makes the endpoint fail to
// register while the call still resolves, so both are cut here, by UTF-8 bytes, which satisfies both.
import { createHash } from 'node:crypto';

export const MATTER_TEXT_LIMIT = 32;

/** A part of a device that has an endpoint of its own, and the word its label gets. */
export type MatterPart = 'door' | 'motion';
const PART_WORD: Record<MatterPart, string> = { door: 'Door', motion: 'Motion' };

const encoder = new TextEncoder();

/** Cuts text to `limit` UTF-8 bytes at a character boundary, without trailing spaces. */
export function cutToBytes(text: string, limit = MATTER_TEXT_LIMIT): string {
  // Control characters (Matter forbids 0x1F in strings) and line breaks become spaces.
  // eslint-disable-next-line no-control-regex -- deliberately matches control characters
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim();
  let out = '';
  let bytes = 0;
  for (const char of clean) {
    const size = encoder.encode(char).length;
    if (bytes + size > limit) break;
    out += char;
    bytes += size;
  }
  return out.trimEnd();
}

/** "Front Door", or for a part "Front Door Door" / "Front Doorbell Motion", cut to 32 bytes. */
export function matterLabel(name: string, part?: MatterPart): string {
  const label = cutToBytes(part === undefined ? name : `${name} ${PART_WORD[part]}`);
  // Matter needs a label; a name of only spaces or symbols still gets one.
  return label === '' ? (part === undefined ? 'Lock Access' : PART_WORD[part]) : label;
}

/**
 * The device id for the device's own endpoint, `<id>-door` / `<id>-motion` for a part, so the
 * endpoints of one device differ. Lock ids are 32 characters already: a serial that would be longer
 * keeps its start and ends in a short hash of the whole, so it stays unique and stable.
 */
export function matterSerial(id: string, part?: MatterPart): string {
  const full = part === undefined ? id : `${id}-${part}`;
  if (encoder.encode(full).length <= MATTER_TEXT_LIMIT && full.trim() !== '') return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  const tail = part === undefined ? `~${hash}` : `~${hash}-${part}`;
  return `${cutToBytes(id, MATTER_TEXT_LIMIT - tail.length)}${tail}`;
}

/** Seeds for the endpoints' UUIDs: apart from the HAP accessories' `lock:<id>` / `doorbell:<id>`. */
export function matterUuidSeed(kind: 'lock' | 'doorbell', id: string, part?: string): string {
  return part === undefined ? `matter:${kind}:${id}` : `matter:${kind}:${id}:${part}`;
}

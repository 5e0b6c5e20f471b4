// The duplicate filter's memory: 16-byte digests with an expiry time each, oldest first, in typed
// arrays sized once for the bound. A key costs the same 25 bytes whatever its length, and adding
// one allocates nothing on the JS heap: a store that fills up over days leaves memory flat. A ring
// holds the entries in the order they were added (expiry order: the TTL is fixed); an open-addressing
// index (linear probing, deletion by backward shift, so no tombstones) finds a digest's entry.
export const DIGEST_BYTES = 16;

const EARLIER = 1;
/** Set again later: the newer entry stands for the digest, this one waits to leave the ring. */
const GONE = 2;

export interface DigestEntry {
  digest: Uint8Array;
  expiresAt: number;
  earlier: boolean;
}

export class DigestTable {
  /** Live entries (each digest once). */
  size = 0;
  /** Live entries added with `earlier` set. */
  earlier = 0;
  private readonly capacity: number;
  private digests: Uint8Array;
  private expiries: Float64Array;
  private flags: Uint8Array;
  /** Ring slot + 1 of each indexed digest; 0 is empty. */
  private readonly index: Int32Array;
  private readonly mask: number;
  /** Sequence numbers of the oldest entry and of the next one; slot = sequence % capacity. */
  private head = 0;
  private tail = 0;

  /** `maxLive`: the most live entries the owner keeps (it drops the oldest before adding more). */
  constructor(maxLive: number) {
    // Room for a few entries set again (gone) before they reach the oldest end; when they fill it, a rebuild.
    this.capacity = maxLive + Math.max(16, maxLive >> 4);
    this.digests = new Uint8Array(this.capacity * DIGEST_BYTES);
    this.expiries = new Float64Array(this.capacity);
    this.flags = new Uint8Array(this.capacity);
    let indexSize = 1;
    while (indexSize < this.capacity * 2) indexSize *= 2;
    this.index = new Int32Array(indexSize);
    this.mask = indexSize - 1;
  }

  /** The expiry time of the digest's live entry; undefined when there is none. */
  expiry(digest: Uint8Array): number | undefined {
    const slot = this.find(digest);
    return slot < 0 ? undefined : this.expiries[slot];
  }

  /** Adds the digest as the newest entry; an older entry of it stops counting. The owner keeps `size` below `maxLive`. */
  add(digest: Uint8Array, expiresAt: number, earlier: boolean): void {
    const old = this.find(digest);
    if (old >= 0) {
      this.unindex(old);
      this.forget(old);
      this.flags[old] = (this.flags[old] ?? 0) | GONE;
    }
    if (this.tail - this.head === this.capacity) this.makeRoom();
    const slot = this.tail % this.capacity;
    this.tail += 1;
    this.digests.set(digest.subarray(0, DIGEST_BYTES), slot * DIGEST_BYTES);
    this.expiries[slot] = expiresAt;
    this.flags[slot] = earlier ? EARLIER : 0;
    this.size += 1;
    if (earlier) this.earlier += 1;
    let i = this.home(slot);
    while (this.index[i] !== 0) i = (i + 1) & this.mask;
    this.index[i] = slot + 1;
  }

  /** The expiry time of the oldest live entry; undefined when empty. */
  oldestExpiry(): number | undefined {
    this.skipGone();
    return this.head === this.tail ? undefined : this.expiries[this.head % this.capacity];
  }

  /** Takes the oldest live entry out. */
  dropOldest(): void {
    this.skipGone();
    if (this.head === this.tail) return;
    const slot = this.head % this.capacity;
    this.head += 1;
    this.unindex(slot);
    this.forget(slot);
  }

  /** The live entries, oldest first. */
  *entries(): Generator<DigestEntry> {
    for (let seq = this.head; seq < this.tail; seq += 1) {
      const slot = seq % this.capacity;
      const flags = this.flags[slot] ?? 0;
      if ((flags & GONE) !== 0) continue;
      yield { digest: this.digests.subarray(slot * DIGEST_BYTES, (slot + 1) * DIGEST_BYTES), expiresAt: this.expiries[slot] ?? 0, earlier: (flags & EARLIER) !== 0 };
    }
  }

  /** Empties the table. */
  clear(): void {
    this.index.fill(0);
    this.head = 0;
    this.tail = 0;
    this.size = 0;
    this.earlier = 0;
  }

  private forget(slot: number): void {
    this.size -= 1;
    if (((this.flags[slot] ?? 0) & EARLIER) !== 0) this.earlier -= 1;
  }

  private skipGone(): void {
    while (this.head < this.tail && ((this.flags[this.head % this.capacity] ?? 0) & GONE) !== 0) this.head += 1;
  }

  /** The ring is full: gone entries at the oldest end leave; when gone ones in the middle fill it, the live ones move together. */
  private makeRoom(): void {
    this.skipGone();
    if (this.tail - this.head < this.capacity) return;
    const live = [...this.entries()].map((entry) => ({ ...entry, digest: entry.digest.slice() }));
    if (live.length >= this.capacity) throw new Error('the digest table is full');
    this.clear();
    for (const entry of live) this.add(entry.digest, entry.expiresAt, entry.earlier);
  }

  /** The index position a digest's probe starts at: its first four bytes (a hash already). */
  private home(slot: number): number {
    const at = slot * DIGEST_BYTES;
    const d = this.digests;
    return ((d[at] ?? 0) | ((d[at + 1] ?? 0) << 8) | ((d[at + 2] ?? 0) << 16) | ((d[at + 3] ?? 0) << 24)) & this.mask;
  }

  /** The ring slot of the digest's live entry, or -1. */
  private find(digest: Uint8Array): number {
    let i = ((digest[0] ?? 0) | ((digest[1] ?? 0) << 8) | ((digest[2] ?? 0) << 16) | ((digest[3] ?? 0) << 24)) & this.mask;
    for (;;) {
      const entry = this.index[i] ?? 0;
      if (entry === 0) return -1;
      if (this.matches(entry - 1, digest)) return entry - 1;
      i = (i + 1) & this.mask;
    }
  }

  private matches(slot: number, digest: Uint8Array): boolean {
    const at = slot * DIGEST_BYTES;
    for (let b = 0; b < DIGEST_BYTES; b += 1) if (this.digests[at + b] !== digest[b]) return false;
    return true;
  }

  /** Takes the slot out of the index, moving later entries of the probe run back (no tombstones). */
  private unindex(slot: number): void {
    let i = this.home(slot);
    while (this.index[i] !== slot + 1) {
      if (this.index[i] === 0) return;
      i = (i + 1) & this.mask;
    }
    let j = i;
    for (;;) {
      j = (j + 1) & this.mask;
      const entry = this.index[j] ?? 0;
      if (entry === 0) break;
      const k = this.home(entry - 1);
      // The entry at j may move to the hole at i unless its home lies cyclically in (i, j].
      const stays = i <= j ? i < k && k <= j : i < k || k <= j;
      if (stays) continue;
      this.index[i] = entry;
      i = j;
    }
    this.index[i] = 0;
  }
}

// Times in the words of the delivery watch's log lines: how long until the next check, and since when
// nothing has arrived.

/** "1 minute", "5 minutes". */
export function minutesWords(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/** "14:02:11 (3 hours ago)"; a day or more back also names the date. */
export function timeWords(at: number, now: number): string {
  const date = new Date(at);
  const ago = now - at;
  const clock = ago >= 24 * 60 * 60_000 ? date.toLocaleString() : date.toLocaleTimeString();
  const minutes = Math.round(ago / 60_000);
  const agoWords = minutes < 1 ? 'just now' : minutes < 120 ? `${minutes} min ago` : `${Math.round(minutes / 60)} hours ago`;
  return `${clock} (${agoWords})`;
}

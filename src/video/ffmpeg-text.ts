// What ffmpeg prints may name the playlist and its segments, whose query strings are signed links
// (credentials). Every address in its output is cut to its scheme and host before it is logged.

/** Any scheme://… address standing in a text, up to a space, quote, bracket or angle bracket. */
const ADDRESS_IN_TEXT = /\b([a-z][a-z0-9+.-]*):\/\/[^\s"'<>()[\]{}]+/gi;

/** `address` as scheme://host (and port); `[address]` when it has no host that can be read. */
export function hostOnly(address: string): string {
  try {
    const url = new URL(address);
    if (url.host !== '') return `${url.protocol}//${url.host}`;
  } catch {
    // Not parseable: fall through to the word that says an address was here.
  }
  return '[address]';
}

/** `text` with every address in it cut to its host. */
export function hostsOnly(text: string): string {
  return text.replace(ADDRESS_IN_TEXT, (address) => hostOnly(address));
}

/** ffmpeg's first line: "ffmpeg version 4.1 Copyright ..." -> "4.1" (undefined when it is not ffmpeg). */
export function ffmpegVersionOf(output: string): string | undefined {
  const match = /^ffmpeg version (\S+)/m.exec(output);
  return match?.[1];
}

/**
 * The names in one of ffmpeg's capability lists (-encoders, -demuxers, -muxers): each row is a
 * column of flags, a name (for formats possibly several, comma separated) and a description.
 * Header lines (before the " ---" rule, or without a flag column) are skipped.
 */
export function capabilityNames(output: string): Set<string> {
  const names = new Set<string>();
  const lines = output.split(/\r?\n/);
  const rule = lines.findIndex((line) => /^\s*-{2,}\s*$/.test(line));
  for (const line of rule >= 0 ? lines.slice(rule + 1) : lines) {
    const match = /^\s*([A-Z.]{1,6})\s+(\S+)/.exec(line);
    if (!match?.[2]) continue;
    for (const name of match[2].split(',')) names.add(name);
  }
  return names;
}

/** The protocols ffmpeg -protocols lists (inputs and outputs alike). */
export function protocolNames(output: string): Set<string> {
  const names = new Set<string>();
  for (const line of output.split(/\r?\n/)) {
    const name = line.trim();
    if (/^[a-z0-9_]+$/.test(name)) names.add(name);
  }
  return names;
}

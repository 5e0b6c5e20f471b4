// A recording's HLS playlist as ffmpeg gets it: every address in it (segments, keys, the
// initialization section, the playlists of a multi-variant playlist) replaced by an opaque address
// of the plugin's relay on this machine, which fetches the original with the plugin's own trust.
// An address the fetch rule refuses (not http(s), plain http beside an https service address, or a
// step down from an https playlist to http) refuses the whole playlist: nothing of it is fetched.
import { refusedAddress } from '../util/fetch-trust.js';

/** A playlist that cannot be played safely; `message` holds no address. */
export class PlaylistRefused extends Error {}

/** ffmpeg reads the rewritten playlist on its standard input; its addresses are all http on this machine. */
export const PIPED_PLAYLIST: readonly string[] = ['-protocol_whitelist', 'pipe,http,tcp,crypto', '-f', 'hls', '-i', 'pipe:0'];

const URI_ATTRIBUTE = /URI="([^"]*)"/g;

/** The extension of an address's last path part (ffmpeg matches segment extensions to formats), or ''. */
export function extensionOf(address: URL): string {
  return /\.([a-z0-9]{1,5})$/i.exec(address.pathname)?.[1]?.toLowerCase() ?? '';
}

/**
 * The playlist with each address resolved against `base` (where the playlist was fetched from),
 * checked, and replaced by what `admit` answers for it. Throws PlaylistRefused when it is not a
 * playlist or names an address that must not be fetched.
 */
export function rewritePlaylist(text: string, base: URL, httpAllowed: boolean, admit: (address: URL) => string): string {
  if (!text.trimStart().startsWith('#EXTM3U')) throw new PlaylistRefused('the answer is not an HLS playlist');
  const replace = (reference: string): string => {
    let address: URL;
    try {
      address = new URL(reference, base);
    } catch {
      throw new PlaylistRefused('the playlist names an address that is not valid');
    }
    const refused = refusedAddress(address, httpAllowed, base);
    if (refused !== undefined) throw new PlaylistRefused(`the playlist names a part that is not fetched: ${refused}`);
    return admit(address);
  };
  return text
    .split(/\r?\n/)
    .map((raw) => {
      const line = raw.trim();
      if (line === '') return line;
      if (line.startsWith('#')) return line.startsWith('#EXT') ? line.replace(URI_ATTRIBUTE, (_all, reference: string) => `URI="${replace(reference)}"`) : line;
      return replace(line);
    })
    .join('\n');
}

// Addresses in log lines, errors and the status file never carry credentials: webhook.publicUrl
// may hold user:password for a reverse proxy's basic auth, and image URLs come from callbacks
// (motion stills may be signed links, whose query string is a credential).

/** `url` without its user name and password (and unchanged when it has none). */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    // Not a URL we can parse: drop anything between "//" and an "@" before the path.
    return url.replace(/\/\/[^/?#]*@/, '//');
  }
}

/** `text` with every occurrence of `url` replaced by its credential-free form. */
export function redactUrlIn(text: string, url: string): string {
  const shown = withoutCredentials(url);
  return shown === url ? text : text.split(url).join(shown);
}

/** An http(s) address standing in a text, up to a space, quote, bracket or angle bracket. */
const LINK_IN_TEXT = /\bhttps?:\/\/[^\s"'<>()[\]{}]+/gi;

/**
 * `url` without user info, query string and fragment, with `?[redacted]` where a query string or
 * fragment was (a signed link's signature and expiry live there); unchanged when it has none.
 */
export function withoutSecretParts(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.search !== '' || parsed.hash !== '';
    if (!hidden && parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return `${parsed.toString()}${hidden ? '?[redacted]' : ''}`;
  } catch {
    return withoutCredentials(url).replace(/[?#].*$/s, '?[redacted]');
  }
}

/** `text` with every http(s) address in it passed through withoutSecretParts. */
export function redactLinksIn(text: string): string {
  return text.replace(LINK_IN_TEXT, (link) => withoutSecretParts(link));
}

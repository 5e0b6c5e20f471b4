// Addresses in log lines, errors and the status file never carry credentials: webhook.publicUrl
// may hold user:password for a reverse proxy's basic auth, and image URLs come from callbacks.

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

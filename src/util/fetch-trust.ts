// The one rule for what the plugin fetches beyond the service's API (recordings, their segments
// and keys, still pictures): http(s) only, and plain http only while the configured service address
// is itself plain http (a local simulator); never a step down from https to http, which anyone on
// the network path could read and change. The certificates are checked by Node as for every request
// of the plugin (its certificate store, NODE_EXTRA_CA_CERTS included).

/** Why `address` must not be fetched (words without the address), or undefined when it may be. `from`: the https(s) address that named it or redirected to it. */
export function refusedAddress(address: URL, httpAllowed: boolean, from?: URL): string | undefined {
  if (address.protocol !== 'https:' && address.protocol !== 'http:') return `it is not http(s) (${address.protocol})`;
  if (address.protocol === 'https:') return undefined;
  if (from?.protocol === 'https:') return 'it steps down from https to plain http';
  if (!httpAllowed) return 'it is plain http (only https is fetched while the service address is https)';
  return undefined;
}

/** Whether the configured service address is plain http, which allows plain http for media too. */
export function httpAllowedBy(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).protocol === 'http:';
  } catch {
    return false;
  }
}

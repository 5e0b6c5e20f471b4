// What a user reads about the tunnel: the provider, the cause and the fix, one message per problem,
// and the tunnel's states. Never the authtoken. What ngrok answered (English, its own words) is in
// the log line only, which also says whether the plugin tries again; the page shows the next try.
import { messageCatalog, type UiMessage } from '../../util/ui-message.js';
import type { TunnelError } from './tunnel-adapter.js';

const DASHBOARD = 'https://dashboard.ngrok.com';
const MEANWHILE = 'Until it connects nothing is registered with the service and no events arrive; HomeKit shows the last known state and commands still work.';

export const TUNNEL_MESSAGES = {
  'tunnel.failed.network': `The ngrok tunnel could not connect: ngrok cannot be reached from this machine. Check the Homebridge machine's internet connection and that its firewall lets it reach ngrok. ${MEANWHILE}`,
  'tunnel.failed.authtoken': `The ngrok tunnel could not connect: ngrok refused the authtoken. Copy your authtoken again from ${DASHBOARD}/get-started/your-authtoken into the plugin settings (webhook.tunnel.authtoken) and restart Homebridge. ${MEANWHILE}`,
  'tunnel.failed.domain': `The ngrok tunnel could not connect: ngrok refused the domain {domain}: it is not a domain of the ngrok account this authtoken belongs to. Copy your domain from ${DASHBOARD}/domains into the plugin settings (webhook.tunnel.domain), or leave it empty for a new address at each start, and restart Homebridge. ${MEANWHILE}`,
  'tunnel.failed.inUse': `The ngrok tunnel could not connect: the domain or the account is in use by another ngrok agent. Stop the other ngrok agent or Homebridge that uses this authtoken, or give this plugin its own domain. ${MEANWHILE}`,
  'tunnel.failed.sdkMissing': `The ngrok tunnel cannot start: the ngrok SDK (@ngrok/ngrok) is not installed for this machine ({platform}). Reinstall the plugin without leaving out optional dependencies, or expose the listener another way and set webhook.publicUrl (see "Exposing the listener" in the docs). ${MEANWHILE}`,
  'tunnel.failed.other': `The ngrok tunnel could not connect: ngrok refused it (its answer is in the Homebridge log). Check the authtoken and domain in the plugin settings. ${MEANWHILE}`,
  'tunnel.connecting': 'Connecting to {provider}…',
  'tunnel.connected': 'The {provider} tunnel forwards {url} to this plugin\'s listener.',
  'tunnel.reconnecting': 'The tunnel lost its connection to {provider} and is reconnecting.',
  'tunnel.closed': 'The tunnel is closed (Homebridge stopped).',
  'tunnel.noListener': 'The ngrok tunnel is not opened because the webhook listener did not start (see the Homebridge log for why).',
} as const;

export const tunnelMessage = messageCatalog(TUNNEL_MESSAGES);

export function tunnelFailureMessage(error: TunnelError, context: { domain?: string | undefined }): UiMessage {
  switch (error.problem) {
    case 'network':
    case 'authtoken':
    case 'inUse':
    case 'other':
      return tunnelMessage(`tunnel.failed.${error.problem}`);
    case 'domain':
      return tunnelMessage('tunnel.failed.domain', { domain: context.domain ?? '' });
    case 'sdkMissing':
      return tunnelMessage('tunnel.failed.sdkMissing', { platform: `${process.platform}-${process.arch}` });
  }
}

/** The failure's log line: the message, what ngrok answered, and whether the plugin tries again. */
export function tunnelFailureLine(message: UiMessage, detail: string, retries: boolean): string {
  const line = `${message.text} (ngrok: ${detail})`;
  return retries ? `${line} The plugin tries again on its own.` : line;
}

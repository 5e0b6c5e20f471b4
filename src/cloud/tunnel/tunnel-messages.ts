// What a user reads when the tunnel cannot open: the provider, the cause and the fix, in one
// sentence group per problem. Never the authtoken (the detail is already free of it).
import type { TunnelError } from './tunnel-adapter.js';

const DASHBOARD = 'https://dashboard.ngrok.com';
const MEANWHILE = 'Until it connects nothing is registered with the service and no events arrive; HomeKit shows the last known state and commands still work.';

export function tunnelFailureMessage(error: TunnelError, context: { domain?: string | undefined; retries: boolean }): string {
  const again = context.retries ? ' The plugin tries again on its own.' : '';
  const cause = ((): string => {
    switch (error.problem) {
      case 'network':
        return `The ngrok tunnel could not connect: ngrok cannot be reached from this machine (${error.detail}). Check the Homebridge machine's internet connection and that its firewall lets it reach ngrok.`;
      case 'authtoken':
        return `The ngrok tunnel could not connect: ngrok refused the authtoken (${error.detail}). Copy your authtoken again from ${DASHBOARD}/get-started/your-authtoken into the plugin settings (webhook.tunnel.authtoken) and restart Homebridge.`;
      case 'domain':
        return `The ngrok tunnel could not connect: ngrok refused the domain ${context.domain ?? ''} (${error.detail}): it is not a domain of the ngrok account this authtoken belongs to. Copy your domain from ${DASHBOARD}/domains into the plugin settings (webhook.tunnel.domain), or leave it empty for a new address at each start, and restart Homebridge.`;
      case 'inUse':
        return `The ngrok tunnel could not connect: the domain or the account is in use by another ngrok agent (${error.detail}). Stop the other ngrok agent or Homebridge that uses this authtoken, or give this plugin its own domain.`;
      case 'sdkMissing':
        return `The ngrok tunnel cannot start: the ngrok SDK (@ngrok/ngrok) is not installed for this machine (${process.platform}-${process.arch}: ${error.detail}). Reinstall the plugin without leaving out optional dependencies, or expose the listener another way and set webhook.publicUrl (see "Exposing the listener" in the docs).`;
      case 'other':
        return `The ngrok tunnel could not connect: ngrok answered "${error.detail}". Check the authtoken and domain in the plugin settings.`;
    }
  })();
  return `${cause}${again} ${MEANWHILE}`;
}

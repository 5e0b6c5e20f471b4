// A stand-in for the `@ngrok/ngrok` SDK, for end-to-end tests of a tunnel that connects late or
// drops. As a module hook (see ./register.mjs) it sends `@ngrok/ngrok` here; as the SDK,
// `forward()` answers after FAKE_NGROK_DELAY_MS with the listener's own loopback address as the
// tunnel's origin, so the simulator's callbacks reach the listener directly, as through a real
// tunnel. With FAKE_NGROK_DROP_AFTER_MS the session reports itself lost that long after it
// connected ("closed"), and connected again a second later.
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Module hook: `@ngrok/ngrok` is this file. */
export function resolve(specifier, context, nextResolve) {
  if (specifier === '@ngrok/ngrok') return { url: import.meta.url, shortCircuit: true };
  return nextResolve(specifier, context);
}

/** The SDK's `forward()`: the part of it the plugin uses. */
export async function forward(config) {
  const delay = Number(process.env.FAKE_NGROK_DELAY_MS ?? '0');
  await sleep(delay);
  const port = String(config.addr).split(':').pop();
  const dropAfter = process.env.FAKE_NGROK_DROP_AFTER_MS;
  if (dropAfter !== undefined && dropAfter !== '') {
    void sleep(Number(dropAfter), undefined, { ref: false }).then(async () => {
      config.onStatusChange?.('closed');
      await sleep(1_000, undefined, { ref: false });
      config.onStatusChange?.('connected');
    });
  }
  return {
    url: () => `http://127.0.0.1:${port}`,
    close: () => Promise.resolve(),
  };
}

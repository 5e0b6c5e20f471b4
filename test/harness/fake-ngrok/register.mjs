// Loaded with `node --import` into a Homebridge under test: the plugin's `import('@ngrok/ngrok')`
// then gets the stand-in SDK of ./sdk.mjs (these machines cannot reach ngrok). Everything else
// resolves as usual.
import { register } from 'node:module';

register('./sdk.mjs', import.meta.url);

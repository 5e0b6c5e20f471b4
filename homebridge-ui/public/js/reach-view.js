// @ts-check
// "How does the service reach this plugin?": my own address (webhook.publicUrl) or the built-in
// ngrok tunnel (webhook.tunnel). The choice shows its own fields; choosing one takes the other
// out of the config block, so the plugin never has both (choosing back brings it back while the
// page is open). The authtoken is a secret field of the Account card: saved, never shown back.
import { block, changeConfig, getPath, setPath } from './config-block.js';
import { $ } from './dom.js';

/** @typedef {'own' | 'ngrok'} Reach */

/** What the other choice held, kept while the page is open: choosing back and forth loses nothing. @type {{ publicUrl?: unknown, tunnel?: unknown }} */
const setAside = {};

/** @returns {Reach} */
function chosenInBlock() {
  return getPath(block(), 'webhook.tunnel') ? 'ngrok' : 'own';
}

/** @param {Reach} reach */
function showFieldsOf(reach) {
  for (const node of document.querySelectorAll('[data-reach]')) {
    /** @type {HTMLElement} */ (node).hidden = /** @type {HTMLElement} */ (node).dataset.reach !== reach;
  }
}

/** Shows the block's choice (after it is loaded, saved or refused). */
export function fillReach() {
  const reach = chosenInBlock();
  /** @type {HTMLInputElement} */ ($(`reach-${reach}`)).checked = true;
  showFieldsOf(reach);
}

export function wireReach() {
  for (const reach of /** @type {const} */ (['own', 'ngrok'])) {
    const radio = /** @type {HTMLInputElement} */ ($(`reach-${reach}`));
    radio.addEventListener('change', () => {
      if (!radio.checked) return;
      showFieldsOf(reach);
      void changeConfig((draft) => {
        if (reach === 'ngrok') {
          setAside.publicUrl = getPath(draft, 'webhook.publicUrl') ?? setAside.publicUrl;
          const tunnel = getPath(draft, 'webhook.tunnel') ?? setAside.tunnel;
          setPath(draft, 'webhook.tunnel', { ...(tunnel && typeof tunnel === 'object' ? tunnel : {}), provider: 'ngrok' });
          setPath(draft, 'webhook.publicUrl', undefined);
        } else {
          setAside.tunnel = getPath(draft, 'webhook.tunnel') ?? setAside.tunnel;
          setPath(draft, 'webhook.tunnel', undefined);
          setPath(draft, 'webhook.publicUrl', getPath(draft, 'webhook.publicUrl') ?? setAside.publicUrl);
        }
      }, 'account-result', radio).then((accepted) => {
        if (!accepted) fillReach();
      });
    });
  }
}

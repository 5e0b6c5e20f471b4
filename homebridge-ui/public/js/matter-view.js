// @ts-check
// The Matter card: whether the plugin publishes to Matter on this bridge, and Homebridge's pairing
// code and QR payload for Google Home, Alexa and other Matter apps. (Its switch is a data-field
// control, written back by the account view's form wiring.)
import { $ } from './dom.js';
import { list } from './format.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').MatterPairingInfo} MatterPairingInfo */

/** @param {MatterPairingInfo} info */
export function renderMatter(info) {
  const [words, colour] = info.active ? [t('matter.on'), 'bg-success'] : info.bridgeMatter ? [t('matter.offForPlugin'), 'bg-secondary'] : [t('matter.off'), 'bg-secondary'];
  const badge = $('matter-badge');
  badge.textContent = words;
  badge.className = `badge ${colour}`;
  badge.dataset.state = info.active ? 'on' : 'off';
  $('matter-message').textContent = showMessage(info.message);
  const pairing = info.active && Boolean(info.manualPairingCode || info.qrCode);
  $('matter-pairing').hidden = !pairing;
  $('matter-code').textContent = info.manualPairingCode ?? '';
  $('matter-qr').textContent = info.qrCode ?? '';
  const tested = info.testedControllers ?? { tested: [], untested: [] };
  $('matter-tested').textContent = t('matter.tested', { tested: list(tested.tested.map(showMessage)), untested: list(tested.untested.map(showMessage)) });
}

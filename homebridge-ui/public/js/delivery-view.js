// @ts-check
// Whether events arrive, from the plugin's delivery check: a banner above everything while they
// are not arriving (what was found and checked, and what to do), and one line in the Status card.
import { $ } from './dom.js';
import { when } from './format.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {NonNullable<NonNullable<UiStatus['plugin']>['delivery']>} Delivery */

/**
 * The Status card's line.
 * @param {Delivery | undefined} delivery
 * @param {boolean} running
 */
function line(delivery, running) {
  if (!delivery) return running ? t('delivery.off') : t('common.notCheckedYet');
  const next = delivery.nextCheckAt ? [t('common.nextCheck', { when: when(delivery.nextCheckAt) })] : [];
  const found = delivery.state === 'arriving'
    ? t('delivery.arriving', { when: when(delivery.lastCheck?.at ?? delivery.since) })
    : delivery.state === 'unknown' ? t('delivery.unknown', { count: delivery.checkEveryMinutes }) : t('delivery.notArriving', { when: when(delivery.since) });
  return [found, ...next].join(' ');
}

/**
 * The banner's sentence: since when nothing arrived, what the check found and what was checked.
 * @param {Delivery} delivery
 */
function bannerText(delivery) {
  const sentences = [delivery.lastHeardAt ? t('banner.heardAt', { when: when(delivery.lastHeardAt) }) : t('banner.heardNever')];
  if (delivery.lastCheck?.message) sentences.push(showMessage(delivery.lastCheck.message));
  if (delivery.checked) sentences.push(t('banner.checked', { registrations: showMessage(delivery.checked.registrations), selfCheck: showMessage(delivery.checked.selfCheck) }));
  if (delivery.nextCheckAt) sentences.push(t('banner.next', { when: when(delivery.nextCheckAt) }));
  return sentences.join(' ');
}

/** @param {UiStatus} status */
export function renderDelivery(status) {
  const delivery = status.plugin?.delivery;
  $('delivery').textContent = line(delivery, status.pluginRunning);
  const banner = $('delivery-banner');
  // A status file left by a plugin that no longer runs says nothing about now.
  const stopped = delivery?.state === 'notArriving' && status.pluginRunning;
  banner.hidden = !stopped;
  banner.dataset.state = delivery?.state ?? 'off';
  $('delivery-banner-text').textContent = stopped && delivery ? bannerText(delivery) : '';
}

// @ts-check
// Whether events arrive, from the plugin's delivery check: a banner above everything while they
// are not arriving (what was found and checked, and what to do), and one line in the Status card.
import { $, when } from './dom.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {NonNullable<NonNullable<UiStatus['plugin']>['delivery']>} Delivery */

/**
 * The Status card's line.
 * @param {Delivery | undefined} delivery
 * @param {boolean} running
 */
function line(delivery, running) {
  if (!delivery) return running ? 'Not checked: the delivery check is off (webhook.deliveryCheckMinutes is 0).' : 'Not checked yet.';
  const next = delivery.nextCheckAt ? ` Next check ${when(delivery.nextCheckAt)}.` : '';
  if (delivery.state === 'arriving') return `Yes (checked ${when(delivery.lastCheck?.at ?? delivery.since)}).${next}`;
  if (delivery.state === 'unknown') return `Not known yet: the plugin checks after ${delivery.checkEveryMinutes} minutes without any event.${next}`;
  return `No, since ${when(delivery.since)}.${next}`;
}

/**
 * The banner's sentence: since when nothing arrived, what the check found and what was checked.
 * @param {Delivery} delivery
 */
function bannerText(delivery) {
  const heard = delivery.lastHeardAt ? `Nothing has come in since ${when(delivery.lastHeardAt)}.` : 'Nothing has come in since the plugin started.';
  const found = delivery.lastCheck?.message ? ` ${delivery.lastCheck.message}` : '';
  const checked = delivery.checked ? ` Checked: ${delivery.checked.registrations}; ${delivery.checked.selfCheck}.` : '';
  const next = delivery.nextCheckAt ? ` The plugin checks again ${when(delivery.nextCheckAt)}.` : '';
  return `${heard}${found}${checked}${next}`;
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

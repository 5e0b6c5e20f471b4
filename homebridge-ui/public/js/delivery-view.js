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

/**
 * Each account whose events are not arriving, with its delivery record: the main account first,
 * then the extra accounts (`accounts.<id>.delivery`) named as "Cabin (cabin)".
 * @param {UiStatus} status
 * @returns {{ name: string, delivery: Delivery }[]}
 */
function notArriving(status) {
  const main = status.plugin?.delivery;
  const extras = Object.entries(status.plugin?.accounts ?? {}).flatMap(([id, account]) => (account.delivery ? [{ name: `${account.name} (${id})`, delivery: account.delivery }] : []));
  return [...(main ? [{ name: t('banner.mainAccount'), delivery: main }] : []), ...extras].filter((entry) => entry.delivery.state === 'notArriving');
}

/** @param {UiStatus} status */
export function renderDelivery(status) {
  const delivery = status.plugin?.delivery;
  $('delivery').textContent = line(delivery, status.pluginRunning);
  const banner = $('delivery-banner');
  // A status file left by a plugin that no longer runs says nothing about now.
  const stopped = status.pluginRunning ? notArriving(status) : [];
  banner.hidden = stopped.length === 0;
  banner.dataset.state = stopped.length > 0 ? 'notArriving' : delivery?.state ?? 'off';
  // With several accounts the banner says which; the details are the first such account's.
  const several = Object.keys(status.plugin?.accounts ?? {}).length > 0;
  const named = several && stopped.length > 0 ? [t('banner.accounts', { accounts: stopped.map((entry) => entry.name).join(', ') })] : [];
  $('delivery-banner-text').textContent = stopped[0] ? [...named, bannerText(stopped[0].delivery)].join(' ') : '';
}

// @ts-check
// The Status card: link state, whether the plugin runs, the public address in use (or the ngrok
// tunnel's state), the public address self-check, the webhook listener's counters, why callbacks
// were refused, the registrations and the last callback per device. Everything comes from the
// plugin's status file through the settings server.
import { $, el } from './dom.js';
import { duration, timeOfDay, when } from './format.js';
import { t } from './i18n.js';
import { deviceWords, registrationWords, showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {NonNullable<UiStatus['plugin']>} PluginStatus */

/** The badge colour per link state; the words are the catalog's status.link.<state>. @type {Record<string, string>} */
const LINK_COLOURS = { linked: 'bg-success', unlinked: 'bg-secondary', reauthorizationNeeded: 'bg-danger', notConfigured: 'bg-secondary', checkSettings: 'bg-danger' };

/** Why callbacks were refused (status.rejection.<reason>); the cause to fix comes first in each. */
const REJECTIONS = new Set(['stale-timestamp', 'bad-signature', 'bad-token', 'missing-token', 'missing-signature', 'malformed-signature']);

/** States with words in the catalog (status.tunnel.<state>, status.registrationState.<state>); another shows as it came. */
const TUNNEL_STATES = new Set(['connecting', 'connected', 'reconnecting', 'failed', 'closed']);
const REGISTRATION_STATES = new Set(['pending', 'registering', 'registered', 'failed', 'deleting']);

/** @param {PluginStatus['selfCheck']} check */
function selfCheckLine(check) {
  if (!check) return t('common.notCheckedYet');
  const state = t(check.state === 'ok' ? 'status.selfCheck.ok' : check.state === 'failed' ? 'status.selfCheck.failed' : 'status.selfCheck.checking');
  const said = showMessage(check.message);
  const message = check.url && !said.includes(check.url) ? t('status.selfCheck.messageUrl', { message: said, url: check.url }) : said;
  const sentences = [check.checkedAt ? t('status.selfCheck.resultAt', { state, message, when: when(check.checkedAt) }) : t('status.selfCheck.result', { state, message })];
  // It repeats every hour (sooner after a failure): when it last passed says how long it has worked.
  if (check.state !== 'ok') sentences.push(check.lastPassedAt ? t('status.selfCheck.lastPassed', { when: when(check.lastPassedAt) }) : t('status.selfCheck.neverPassed'));
  if (check.nextAt) sentences.push(t('common.nextCheck', { when: when(check.nextAt) }));
  return el('span', { class: check.state === 'ok' ? 'text-success' : check.state === 'failed' ? 'text-danger' : '', 'data-state': check.state }, sentences.join(' '));
}

/**
 * Where the service calls the plugin: its own address, or the ngrok tunnel and its state (with the
 * tunnel's words and what to do while it does not connect).
 * @param {PluginStatus['publicAddress']} address
 */
function publicAddressLine(address) {
  if (!address) return t('common.notKnownYet');
  if (address.via === 'config') return address.url ?? t('status.address.notSet');
  const tunnel = address.tunnel;
  const ok = tunnel?.state === 'connected';
  const state = tunnel?.state ?? 'connecting';
  const line = t('status.tunnel.line', { state: TUNNEL_STATES.has(state) ? t(`status.tunnel.${state}`) : state });
  const where = address.url ? t('status.tunnel.withUrl', { url: address.url, tunnel: line }) : line;
  const sentences = [ok || !tunnel ? where : t('status.tunnel.problem', { tunnel: where, message: showMessage(tunnel.message) })];
  if (tunnel?.nextTryAt) sentences.push(t('status.tunnel.nextTry', { when: when(tunnel.nextTryAt) }));
  return el('span', { class: ok ? 'text-success' : tunnel?.state === 'failed' ? 'text-danger' : '', 'data-state': state }, sentences.join(' '));
}

/**
 * @param {PluginStatus['receiver'] | undefined} receiver
 */
function renderReceiver(receiver) {
  if (!receiver) $('receiver').textContent = t('status.receiver.notStarted');
  else {
    const counts = { accepted: receiver.accepted, duplicates: receiver.duplicates };
    $('receiver').textContent = !receiver.listening
      ? t('status.receiver.notListening', counts)
      : receiver.listenAddress ? t('status.receiver.listeningOn', { ...counts, address: receiver.listenAddress }) : t('status.receiver.listening', counts);
  }
  const rejected = Object.entries(receiver?.rejected ?? {});
  const lastRejection = receiver?.lastRejection;
  $('rejected').replaceChildren(
    rejected.length === 0
      ? t('status.rejected.none')
      : el('ul', { class: 'mb-0 ps-3' }, ...rejected.map(([reason, count]) => el('li', { 'data-reason': reason,
        text: t('status.rejected.count', { reason: REJECTIONS.has(reason) ? t(`status.rejection.${reason}`) : reason, count }) }))),
    ...(lastRejection?.clockOffsetMs === undefined
      ? []
      : [el('div', { class: 'text-danger', id: 'clock-offset',
        text: t(lastRejection.clockOffsetMs >= 0 ? 'status.clock.ahead' : 'status.clock.behind', { offset: duration(lastRejection.clockOffsetMs), when: when(lastRejection.at) }) })]),
  );
}

/**
 * @param {PluginStatus | undefined} plugin
 * @param {Map<string, string>} names device name by "kind:id"
 */
function renderTables(plugin, names) {
  const regs = plugin?.registrations ?? [];
  $('registrations').querySelector('tbody')?.replaceChildren(
    ...(regs.length === 0
      ? [el('tr', {}, el('td', { colspan: 4, class: 'text-muted', text: t('status.registrations.none') }))]
      : regs.map((r) => el('tr', { 'data-kind': r.kind, 'data-id': r.id },
        el('td', { text: registrationWords(r.kind, r.name ?? names.get(`${r.kind}:${r.id}`) ?? r.id) }),
        el('td', { class: r.state === 'registered' ? 'text-success' : r.state === 'failed' ? 'text-danger' : '', 'data-state': r.state,
          text: REGISTRATION_STATES.has(r.state) ? t(`status.registrationState.${r.state}`) : r.state }),
        el('td', { text: when(r.lastSuccessAt) }),
        el('td', { class: 'text-danger', text: showMessage(r.lastError) })))),
  );
  const last = Object.values(plugin?.receiver?.lastCallbacks ?? {});
  $('last-callbacks').querySelector('tbody')?.replaceChildren(
    ...(last.length === 0
      ? [el('tr', {}, el('td', { colspan: 2, class: 'text-muted', text: t('status.lastCallbacks.none') }))]
      : last.map((c) => el('tr', { 'data-device': `${c.deviceKind}:${c.deviceId}` },
        el('td', { text: c.deviceKind === 'user' ? t('status.lastCallbacks.user') : names.get(`${c.deviceKind}:${c.deviceId}`) ?? deviceWords(c.deviceKind, c.deviceId) }),
        el('td', { 'data-at': c.at, text: when(c.at) })))),
  );
}

/** @param {UiStatus} status */
export function renderStatus(status) {
  const state = status.link.state;
  const badge = $('link-badge');
  badge.textContent = state in LINK_COLOURS ? t(`status.link.${state}`) : state;
  badge.className = `badge ${LINK_COLOURS[state] ?? 'bg-secondary'}`;
  badge.dataset.state = state;
  $('link-message').textContent = showMessage(status.link.message);

  const plugin = status.plugin;
  $('plugin-running').textContent = !plugin
    ? t('status.plugin.neverRan')
    : t(status.pluginRunning ? 'status.plugin.running' : 'status.plugin.notRunning', { when: when(plugin.updatedAt) });
  $('status-updated').textContent = t('status.refreshed', { time: timeOfDay(new Date()) });
  $('public-address').replaceChildren(publicAddressLine(plugin?.publicAddress));
  $('self-check').replaceChildren(selfCheckLine(plugin?.selfCheck));
  renderReceiver(plugin?.receiver);
  renderTables(plugin, new Map((plugin?.devices ?? []).map((d) => [`${d.kind}:${d.id}`, d.name])));
}

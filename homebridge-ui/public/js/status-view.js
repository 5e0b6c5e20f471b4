// @ts-check
// The Status card: link state, whether the plugin runs, the public address in use (or the ngrok
// tunnel's state), the public address self-check, the webhook listener's counters, why callbacks
// were refused, the registrations and the last callback per device. Everything comes from the
// plugin's status file through the settings server.
import { $, el, when } from './dom.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {NonNullable<UiStatus['plugin']>} PluginStatus */

/** @type {Record<string, [string, string]>} */
const LINK_WORDS = {
  linked: ['Linked', 'bg-success'],
  unlinked: ['Not linked', 'bg-secondary'],
  reauthorizationNeeded: ['Link again', 'bg-danger'],
  notConfigured: ['Not configured', 'bg-secondary'],
};

/** Why callbacks were refused, in words; the cause to fix comes first. @type {Record<string, string>} */
const REJECTION_WORDS = {
  'stale-timestamp': 'Signature time too far off (check this machine\'s clock)',
  'bad-signature': 'Signature does not match the API key',
  'bad-token': 'Wrong webhook token (old registration?)',
  'missing-token': 'No webhook token',
  'missing-signature': 'No signature',
  'malformed-signature': 'Unreadable signature',
};

/** @param {number} ms how far this machine's clock is ahead (positive) of the service's */
function offsetWords(ms) {
  const minutes = Math.round(Math.abs(ms) / 60000);
  const size = minutes >= 120 ? `${Math.round(minutes / 60)} hours` : minutes >= 1 ? `${minutes} min` : `${Math.round(Math.abs(ms) / 1000)} s`;
  return `${size} ${ms >= 0 ? 'ahead of' : 'behind'}`;
}

/** @param {PluginStatus['selfCheck']} check */
function selfCheckLine(check) {
  if (!check) return 'Not checked yet.';
  const words = check.state === 'ok' ? 'OK' : check.state === 'failed' ? 'Failed' : 'Checking';
  const url = check.url && !check.message.includes(check.url) ? ` (${check.url})` : '';
  const at = check.checkedAt ? `, ${when(check.checkedAt)}` : '';
  // It repeats every hour (sooner after a failure): when it last passed says how long it has worked.
  const passed = check.state !== 'ok' && check.lastPassedAt ? ` Last passed ${when(check.lastPassedAt)}.` : check.state === 'ok' ? '' : ' It has not passed yet.';
  const next = check.nextAt ? ` Next check ${when(check.nextAt)}.` : '';
  return el('span', { class: check.state === 'ok' ? 'text-success' : check.state === 'failed' ? 'text-danger' : '', 'data-state': check.state },
    `${words}: ${check.message}${url}${at}.${passed}${next}`);
}

/** @type {Record<string, string>} */
const TUNNEL_WORDS = { connecting: 'connecting', connected: 'connected', reconnecting: 'reconnecting', failed: 'not connected', closed: 'closed' };

/**
 * Where the service calls the plugin: its own address, or the ngrok tunnel and its state (with the
 * tunnel's words and what to do while it does not connect).
 * @param {PluginStatus['publicAddress']} address
 */
function publicAddressLine(address) {
  if (!address) return 'Not known yet.';
  if (address.via === 'config') return address.url ?? 'Not set.';
  const tunnel = address.tunnel;
  const ok = tunnel?.state === 'connected';
  const words = `ngrok tunnel, ${TUNNEL_WORDS[tunnel?.state ?? 'connecting'] ?? tunnel?.state}`;
  return el('span', { class: ok ? 'text-success' : tunnel?.state === 'failed' ? 'text-danger' : '', 'data-state': tunnel?.state ?? 'connecting' },
    `${address.url ? `${address.url} (${words})` : words}${ok || !tunnel ? '' : `: ${tunnel.message}`}${tunnel?.nextTryAt ? ` Next try ${when(tunnel.nextTryAt)}.` : ''}`);
}

/**
 * @param {PluginStatus['receiver'] | undefined} receiver
 */
function renderReceiver(receiver) {
  $('receiver').textContent = !receiver
    ? 'Not started yet.'
    : `${receiver.listening ? `Listening${receiver.listenAddress ? ` on ${receiver.listenAddress}` : ''}` : 'Not listening'}; ${receiver.accepted} accepted, ${receiver.duplicates} duplicates dropped.`;
  const rejected = Object.entries(receiver?.rejected ?? {});
  const lastRejection = receiver?.lastRejection;
  $('rejected').replaceChildren(
    rejected.length === 0
      ? 'None.'
      : el('ul', { class: 'mb-0 ps-3' }, ...rejected.map(([reason, count]) => el('li', { 'data-reason': reason, text: `${REJECTION_WORDS[reason] ?? reason}: ${count}` }))),
    ...(lastRejection?.clockOffsetMs === undefined
      ? []
      : [el('div', { class: 'text-danger', id: 'clock-offset', text: `This machine's clock is ${offsetWords(lastRejection.clockOffsetMs)} the service's (${when(lastRejection.at)}): callbacks are refused and lost. Set up time sync (NTP) on this machine.` })]),
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
      ? [el('tr', {}, el('td', { colspan: 4, class: 'text-muted', text: 'None yet.' }))]
      : regs.map((r) => el('tr', { 'data-kind': r.kind, 'data-id': r.id },
        el('td', { text: r.kind === 'user' ? 'Your account (user)' : `${r.kind === 'lock' ? 'Lock' : 'Doorbell'} ${r.name ?? names.get(`${r.kind}:${r.id}`) ?? r.id}` }),
        el('td', { class: r.state === 'registered' ? 'text-success' : r.state === 'failed' ? 'text-danger' : '', text: r.state }),
        el('td', { text: r.lastSuccessAt ? when(Date.parse(r.lastSuccessAt)) : 'never' }),
        el('td', { class: 'text-danger', text: r.lastError ?? '' })))),
  );
  const last = Object.values(plugin?.receiver?.lastCallbacks ?? {});
  $('last-callbacks').querySelector('tbody')?.replaceChildren(
    ...(last.length === 0
      ? [el('tr', {}, el('td', { colspan: 2, class: 'text-muted', text: 'No callback received yet.' }))]
      : last.map((c) => el('tr', { 'data-device': `${c.deviceKind}:${c.deviceId}` },
        el('td', { text: c.deviceKind === 'user' ? 'Your account' : names.get(`${c.deviceKind}:${c.deviceId}`) ?? `${c.deviceKind} ${c.deviceId}` }),
        el('td', { text: when(c.at) })))),
  );
}

/** @param {UiStatus} status */
export function renderStatus(status) {
  const [words, colour] = LINK_WORDS[status.link.state] ?? [status.link.state, 'bg-secondary'];
  const badge = $('link-badge');
  badge.textContent = words;
  badge.className = `badge ${colour}`;
  badge.dataset.state = status.link.state;
  $('link-message').textContent = status.link.message;

  const plugin = status.plugin;
  $('plugin-running').textContent = !plugin
    ? 'The plugin has not run yet: save the settings and restart Homebridge.'
    : status.pluginRunning
      ? `The plugin is running (status from ${when(plugin.updatedAt)}).`
      : `The plugin is not running; this is its status from ${when(plugin.updatedAt)}.`;
  $('status-updated').textContent = `Refreshed ${new Date().toLocaleTimeString()}`;
  $('public-address').replaceChildren(publicAddressLine(plugin?.publicAddress));
  $('self-check').replaceChildren(selfCheckLine(plugin?.selfCheck));
  renderReceiver(plugin?.receiver);
  renderTables(plugin, new Map((plugin?.devices ?? []).map((d) => [`${d.kind}:${d.id}`, d.name])));
}

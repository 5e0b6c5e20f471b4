// @ts-check
// The Event log card: the plugin's last events in the page's language, filtered by person, with the
// motion still image and a player for doorbell recordings (hls.js, vendored at build time).
import { accountRequest, holdingOf } from './account-list.js';
import { $, busy, el } from './dom.js';
import { when } from './format.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';
import { call } from './requests.js';

/** @typedef {import('../../types/page.js').EventLogEntry} EventLogEntry */

/** The event log as last fetched, newest first: kept to re-filter it by person. @type {EventLogEntry[]} */
let lastEvents = [];
/** @type {InstanceType<NonNullable<Window['Hls']>> | undefined} */
let hls;

function personFilter() {
  return /** @type {HTMLSelectElement} */ ($('events-person'));
}

/**
 * What happened, in the page's language: the entry's line code and params; an entry an earlier
 * version wrote has only its English text.
 * @param {EventLogEntry} e
 */
function eventWords(e) {
  return e.how === undefined ? e.text : showMessage({ code: e.how, params: e.params ?? {}, text: e.text });
}

/** @param {EventLogEntry} e */
function whatCell(e) {
  const text = eventWords(e);
  const what = el('td', {}, el('div', { text }));
  if (e.imageUrl) {
    const img = el('img', { src: e.imageUrl, alt: t('events.stillAlt', { what: text }), class: 'la-still mt-1' });
    // The service sends the same still as SecureURL (https) and Url (http); the plugin keeps the
    // https one. If it does not load (e.g. a certificate problem), try the plain address once.
    img.addEventListener('error', () => {
      if (img.src.startsWith('https:')) img.src = `http:${img.src.slice('https:'.length)}`;
    });
    what.append(img);
  }
  return what;
}

/** @param {EventLogEntry[]} all newest first */
export function renderEvents(all) {
  lastEvents = all;
  const person = personFilter().value;
  const entries = person === '' ? all : all.filter((e) => e.userId === person);
  $('events-empty').hidden = entries.length > 0;
  $('events-empty').textContent = t(all.length > 0 ? 'events.noneForPerson' : 'events.none');
  $('events').querySelector('tbody')?.replaceChildren(...entries.map((e) => {
    const action = e.deviceKind === 'doorbell' && e.dvrId
      ? el('button', { type: 'button', class: 'btn btn-sm btn-outline-primary', 'data-dvr': e.dvrId, text: t('events.play'),
        onclick: (event) => busy(event.currentTarget, () => play(e)) })
      : undefined;
    return el('tr', { 'data-kind': e.kind, 'data-device': `${e.deviceKind}:${e.deviceId}`, 'data-user': e.userId },
      el('td', { class: 'text-nowrap', text: when(e.at) }),
      el('td', { text: e.deviceName }),
      whatCell(e),
      el('td', {}, action));
  }));
}

/** @param {EventLogEntry} entry a doorbell event with a recording (dvrId) */
async function play(entry) {
  const status = $('player-status');
  const video = /** @type {HTMLVideoElement} */ ($('player'));
  $('player-box').hidden = false;
  status.textContent = t('events.lookingUp', { device: entry.deviceName });
  /** @type {{ url: string } | undefined} */
  const answer = await call('/video', { ...accountRequest(holdingOf('doorbell', entry.deviceId, []).owner), doorbellId: entry.deviceId, dvrId: entry.dvrId }, 'player-status');
  if (!answer) return;
  if (hls) {
    hls.destroy();
    hls = undefined;
  }
  video.dataset.source = answer.url;
  video.onloadeddata = () => {
    status.textContent = t('events.playing', { device: entry.deviceName, when: when(entry.at) });
    status.dataset.state = 'playing';
  };
  status.dataset.state = 'loading';
  const Hls = window.Hls;
  if (Hls?.isSupported()) {
    hls = new Hls();
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (data.fatal) {
        status.textContent = t('events.playFailed', { details: data.details });
        status.dataset.state = 'error';
      }
    });
    hls.loadSource(answer.url);
    hls.attachMedia(video);
  } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
    video.src = answer.url;
  } else {
    status.textContent = t('events.cannotPlay');
    return;
  }
  video.play().catch(() => undefined);
}

export function wireEvents() {
  personFilter().addEventListener('change', () => { renderEvents(lastEvents); });
}

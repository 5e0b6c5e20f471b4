// @ts-check
// The Lock Access settings page, started inside the Homebridge UI's iframe (window.homebridge is
// injected by @homebridge/plugin-ui-utils). Everything shown comes from our settings server
// (homebridge-ui/server.js), which never returns a secret.
//
// How the page is put together, and how to add a card:
// - One file per card ("view") in this folder, named <card>-view.js, owning that card's markup ids
//   in index.html. A view exports wire<Card>() to attach its listeners once at start-up and, when
//   it shows server data, render<Card>(answer) to draw it (safe to call again with a new answer).
// - Views change the config only through changeConfig (config-block.js): it checks the change with
//   the plugin's own rules on the server first and shows refusals next to the field.
// - This file wires the views: start() calls every wire function, refresh() fetches what the cards
//   show and calls the render functions when an answer changed. A new card adds its markup to
//   index.html, its <card>-view.js, and one line in start() (and in refresh() if it polls).
// - Every word goes through t() (i18n.js) with its key in i18n/en.json and the other catalogs:
//   index.html names keys in data-i18n attributes; dates and numbers go through format.js.
import { loadBlock } from './config-block.js';
import { wireAddAccount } from './account-add.js';
import { wireRemoveAccount } from './account-remove.js';
import { accountEntries, setAccountStatus } from './account-list.js';
import { fillAccountForm, wireAccountActions, wireAccountForm } from './account-view.js';
import { renderAccounts, setAccountDeviceNames } from './accounts-view.js';
import { renderDelivery } from './delivery-view.js';
import { renderDevices, setPluginDevices, wireDevices } from './devices-view.js';
import { renderEvents, wireEvents } from './events-view.js';
import { startLanguage } from './i18n.js';
import { renderMatter } from './matter-view.js';
import { renderVideo } from './video-view.js';
import { renderPeople, setSeenPeople } from './people-view.js';
import { wireReach } from './reach-view.js';
import { $ } from './dom.js';
import { hb, quietly } from './requests.js';
import { renderKeypadCodes } from './keypad-view.js';
import { renderStatus } from './status-view.js';
import { renderSupport, wireSupport } from './support-view.js';
import { translatePage } from './translate-page.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {import('../../types/page.js').EventLogEntry} EventLogEntry */
/** @typedef {import('../../types/page.js').MatterPairingInfo} MatterPairingInfo */
/** @typedef {import('../../types/page.js').PersonSeen} PersonSeen */

/** How often the page asks its server for news. */
const POLL_MS = 3000;

/** The last answer drawn per server path, so an unchanged answer does not redraw its card. @type {Map<string, string>} */
const drawn = new Map();
/** @type {ReturnType<typeof setTimeout> | undefined} */
let pollTimer;

/**
 * Whether `answer` differs from what was last drawn for `path` (and remembers it).
 * @param {string} path
 * @param {unknown} answer
 */
function changed(path, answer) {
  if (answer === undefined) return false;
  const json = JSON.stringify(answer);
  if (drawn.get(path) === json) return false;
  drawn.set(path, json);
  return true;
}

/** Fetches what the cards show and redraws the cards whose answers changed. */
async function refresh() {
  const [status, events, matter] = await Promise.all([
    /** @type {Promise<UiStatus | undefined>} */ (quietly('/status', { accountIds: accountEntries().map((e) => e.id) })),
    /** @type {Promise<EventLogEntry[] | undefined>} */ (quietly('/events')),
    /** @type {Promise<MatterPairingInfo | undefined>} */ (quietly('/matter')),
  ]);
  if (matter && changed('/matter', matter)) renderMatter(matter);
  if (status && changed('/status', status)) {
    setAccountStatus(status);
    setAccountDeviceNames(new Map((status.plugin?.devices ?? []).map((d) => [`${d.kind}:${d.id}`, d.name])));
    renderAccounts(refresh);
    renderStatus(status);
    renderDelivery(status);
    renderVideo(status);
    renderSupport(status.plugin?.devices ?? []);
    setPluginDevices(status.plugin?.devices ?? []);
    renderDevices();
  }
  if (events && changed('/events', events)) {
    // The people list changes only with the log.
    /** @type {PersonSeen[] | undefined} */
    const people = await quietly('/people');
    if (people) setSeenPeople(people);
    renderPeople();
    renderEvents(events);
    /** @type {import('../../types/page.js').KeypadCode[] | undefined} */
    const codes = await quietly('/keypad-codes');
    if (codes) renderKeypadCodes(codes);
  }
}

function poll() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(() => {
    void refresh().finally(poll);
  }, POLL_MS);
}

async function start() {
  // The language first: the page is drawn once, already in it (index.html keeps #la-root hidden).
  await startLanguage(hb());
  const root = $('la-root');
  translatePage(root);
  await loadBlock();
  fillAccountForm();
  wireAccountForm();
  wireReach();
  wireAccountActions(refresh);
  const accountsChanged = () => {
    renderAccounts(refresh);
    renderDevices();
    // A new account's badge comes from its own token file.
    drawn.delete('/status');
    void refresh();
  };
  wireAddAccount(accountsChanged);
  wireRemoveAccount(accountsChanged);
  wireDevices();
  wireEvents();
  wireSupport();
  renderSupport([]);
  renderAccounts(refresh);
  renderDevices();
  renderPeople();
  root.hidden = false;
  await refresh();
  poll();
}

if ('homebridge' in window) {
  hb().addEventListener('ready', () => {
    void start();
  });
}

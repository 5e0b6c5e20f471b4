// @ts-check
// The Support card: "Send a test event" proves the whole way from the service to this plugin and
// says in one sentence what is wrong when it is not; "Download diagnostics" saves one JSON file to
// attach to a bug report (the server takes every secret out before it answers).
import { $, busy, el, say } from './dom.js';
import { accountRequest, holdingOf } from './account-list.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';
import { call } from './requests.js';

/** @typedef {import('../../types/page.js').DeviceStatus} DeviceStatus */
/** @typedef {import('../../types/page.js').TestEventVerdict} TestEventVerdict */

const ASK_EVERY_MS = 1000;

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The locks the test event can use (from the plugin's status), keeping the choice made.
 * @param {DeviceStatus[]} devices
 */
export function renderSupport(devices) {
  const select = /** @type {HTMLSelectElement} */ ($('test-event-lock'));
  const chosen = select.value;
  const locks = devices.filter((d) => d.kind === 'lock');
  select.replaceChildren(...locks.map((d) => el('option', { value: d.id, text: `${d.name} (${d.id})` })));
  if (locks.some((d) => d.id === chosen)) select.value = chosen;
  /** @type {HTMLButtonElement} */ ($('test-event')).disabled = locks.length === 0;
  if (locks.length === 0) say('test-event-result', t('support.noLock'), 'info');
}

async function sendTestEvent() {
  const lockId = /** @type {HTMLSelectElement} */ ($('test-event-lock')).value;
  if (!lockId) return;
  say('test-event-result', t('support.asking'), 'info');
  // The lock's owner asks for its status, and its callback comes on that account's path.
  const account = accountRequest(holdingOf('lock', lockId, []).owner);
  /** @type {{ lockId: string; startedAt: number } | undefined} */
  const started = await call('/test-event/start', { ...account, lockId }, 'test-event-result');
  if (!started) return;
  say('test-event-result', t('support.waiting'), 'info');
  for (;;) {
    await pause(ASK_EVERY_MS);
    /** @type {TestEventVerdict | undefined} */
    const verdict = await call('/test-event/result', { ...account, ...started }, 'test-event-result');
    if (!verdict) return;
    if (verdict.state === 'waiting') continue;
    const box = $('test-event-result');
    say('test-event-result', showMessage(verdict.message), verdict.state === 'passed' ? 'ok' : 'error');
    box.dataset.state = verdict.state;
    return;
  }
}

async function downloadDiagnostics() {
  /** @type {Record<string, unknown> | undefined} */
  const report = await call('/diagnostics', {}, 'diagnostics-result');
  if (!report) return;
  const text = JSON.stringify(report, null, 2);
  const link = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/json' })), download: `lock-access-diagnostics-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  say('diagnostics-result', t('support.diagnosticsSaved'), 'ok');
}

export function wireSupport() {
  $('test-event').addEventListener('click', (event) => {
    void busy(event.currentTarget, sendTestEvent);
  });
  $('diagnostics').addEventListener('click', (event) => {
    void busy(event.currentTarget, downloadDiagnostics);
  });
}

// @ts-check
// Shows what the plugin's config rules refused, in words, next to the field that holds the value
// (marked aria-invalid and described by the message), and in the card's result box. A mark stays
// while its field still shows the refused value: it goes when that field's next change is accepted.
import { $, el, say } from './dom.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').ConfigBlock} ConfigBlock */
/** @typedef {import('../../types/page.js').FieldProblem} FieldProblem */

let nextId = 0;

/**
 * The control that holds the value at `path` of `draft`, if the page shows one.
 * @param {FieldProblem['path']} path
 * @param {ConfigBlock} draft
 * @returns {Element | undefined}
 */
function controlFor(path, draft) {
  const [list, index, option] = path;
  // An extra account's device entry: the same row as the block's own, by the device's id.
  if (list === 'accounts' && typeof index === 'number' && (option === 'locks' || option === 'doorbells')) {
    const entry = /** @type {ConfigBlock[] | undefined} */ (draft.accounts)?.[index];
    return entry ? controlFor(path.slice(2), entry) : undefined;
  }
  if ((list === 'locks' || list === 'doorbells') && typeof index === 'number') {
    const entry = /** @type {{ id?: unknown }[] | undefined} */ (draft[list])?.[index];
    const kind = list === 'locks' ? 'lock' : 'doorbell';
    const row = document.querySelector(`#devices tr[data-kind="${kind}"][data-id="${CSS.escape(String(entry?.id ?? ''))}"]`);
    return row?.querySelector(`[data-option="${CSS.escape(String(option ?? ''))}"]`) ?? row?.querySelector('input') ?? undefined;
  }
  if (list === 'people' && typeof index === 'number') {
    const person = /** @type {{ userId?: unknown }[] | undefined} */ (draft.people)?.[index];
    return document.querySelector(`[data-trigger="${CSS.escape(String(person?.userId ?? ''))}"]`) ?? undefined;
  }
  const key = CSS.escape(path.join('.'));
  return document.querySelector(`[data-field="${key}"], [data-secret="${key}"]`) ?? undefined;
}

/**
 * Removes the mark and message of one control.
 * @param {Element} control
 */
function unmark(control) {
  const id = control.getAttribute('aria-describedby');
  if (id) document.getElementById(id)?.remove();
  control.removeAttribute('aria-invalid');
  control.removeAttribute('aria-describedby');
  control.classList.remove('is-invalid');
}

/**
 * A change made with `control` was accepted: its mark goes, and once no field is marked any more,
 * so do the "Not saved" lines of the result boxes.
 * @param {Element | undefined} control
 */
export function problemSolved(control) {
  if (control?.getAttribute('aria-invalid') === 'true') unmark(control);
  if (document.querySelector('.la-problem')) return;
  for (const box of document.querySelectorAll('[data-refused]')) {
    box.removeAttribute('data-refused');
    box.textContent = '';
  }
}

/**
 * @param {FieldProblem[]} problems
 * @param {ConfigBlock} draft the refused block, to find which device or person a path names
 * @param {string} resultBox
 */
export function showProblems(problems, draft, resultBox) {
  for (const problem of problems) {
    const control = controlFor(problem.path, draft);
    if (!control) continue;
    unmark(control);
    nextId += 1;
    const id = `la-problem-${nextId}`;
    control.setAttribute('aria-invalid', 'true');
    control.setAttribute('aria-describedby', id);
    control.classList.add('is-invalid');
    // After the label that wraps an inline control, so the message is not read as part of its name.
    const anchor = control.closest('label') ?? control;
    anchor.after(el('div', { class: 'invalid-feedback d-block la-problem', id, 'data-problem-for': problem.path.join('.'), text: showMessage(problem.message) }));
  }
  say(resultBox, t('problems.notSaved', { problems: problems.map((p) => showMessage(p.message)).join('; ') }), 'error');
  $(resultBox).dataset.refused = 'true';
}

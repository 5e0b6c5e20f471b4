// @ts-check
// Shows what the plugin's config rules refused, in words, next to the field that holds the value
// (marked aria-invalid and described by the message), and in the card's result box.
import { el, say } from './dom.js';

/** @typedef {import('../../types/page.js').ConfigBlock} ConfigBlock */
/** @typedef {import('../../types/page.js').FieldProblem} FieldProblem */

/**
 * The control that holds the value at `path` of `draft`, if the page shows one.
 * @param {FieldProblem['path']} path
 * @param {ConfigBlock} draft
 * @returns {Element | undefined}
 */
function controlFor(path, draft) {
  const [list, index, option] = path;
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

/** Removes every mark and message of an earlier refusal. */
export function clearProblems() {
  for (const node of document.querySelectorAll('.la-problem')) node.remove();
  for (const node of document.querySelectorAll('[aria-invalid="true"]')) {
    node.removeAttribute('aria-invalid');
    node.removeAttribute('aria-describedby');
    node.classList.remove('is-invalid');
  }
}

/**
 * @param {FieldProblem[]} problems
 * @param {ConfigBlock} draft the refused block, to find which device or person a path names
 * @param {string} resultBox
 */
export function showProblems(problems, draft, resultBox) {
  clearProblems();
  problems.forEach((problem, index) => {
    const control = controlFor(problem.path, draft);
    if (!control) return;
    const id = `la-problem-${index}`;
    control.setAttribute('aria-invalid', 'true');
    control.setAttribute('aria-describedby', id);
    control.classList.add('is-invalid');
    // After the label that wraps an inline control, so the message is not read as part of its name.
    const anchor = control.closest('label') ?? control;
    anchor.after(el('div', { class: 'invalid-feedback d-block la-problem', id, 'data-problem-for': problem.path.join('.'), text: problem.message }));
  });
  say(resultBox, `Not saved: ${problems.map((p) => p.message).join('; ')}.`, 'error');
}

// @ts-check
// Small DOM helpers shared by every view. User-supplied text only ever goes in through textContent
// (el's `text`) or attributes, never parsed as HTML.

/**
 * The element with this id. The page's markup (index.html) is fixed, so a missing id is a bug.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @returns {T}
 */
export function $(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the settings page has no #${id}`);
  return /** @type {T} */ (node);
}

/** @typedef {Record<string, string | number | boolean | null | undefined | ((event: Event) => unknown)>} Attrs */

/**
 * Creates an element: `class`, `text` (textContent), `on<event>` listeners, other keys as attributes
 * (true as an empty attribute; false, null and undefined leave it out).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...(Node | string | undefined | null)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      continue;
    }
    if (key === 'class') node.className = String(value);
    else if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

/**
 * Puts a message into a result box (a role="status" element, so screen readers announce it).
 * @param {string} target id of the box
 * @param {string} message
 * @param {'error' | 'ok' | 'info'} kind
 */
export function say(target, message, kind) {
  const box = $(target);
  box.textContent = message;
  box.className = `mt-2 small text-${kind === 'error' ? 'danger' : kind === 'ok' ? 'success' : 'body'}`;
}

/**
 * Disables the button while `fn` runs, so a second click cannot start the same action twice.
 * @param {EventTarget | null} button
 * @param {() => Promise<unknown>} fn
 */
export async function busy(button, fn) {
  const target = button instanceof HTMLButtonElement ? button : undefined;
  if (target) target.disabled = true;
  try {
    await fn();
  } finally {
    if (target) target.disabled = false;
  }
}

/**
 * The element an input event came from, typed as an input.
 * @param {Event} event
 * @returns {HTMLInputElement}
 */
export function inputOf(event) {
  return /** @type {HTMLInputElement} */ (event.currentTarget);
}

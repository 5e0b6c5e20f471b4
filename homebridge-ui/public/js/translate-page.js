// @ts-check
// Words of index.html: an element names its text's key in data-i18n and an attribute's key in
// data-i18n-<attribute> (placeholder, aria-label, title, alt, value); the markup holds no words.
import { t } from './i18n.js';

const ATTRIBUTES = ['placeholder', 'aria-label', 'title', 'alt', 'value'];

/** @param {ParentNode} root */
export function translatePage(root) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(node.getAttribute('data-i18n') ?? '');
  for (const attribute of ATTRIBUTES) {
    for (const node of root.querySelectorAll(`[data-i18n-${attribute}]`)) node.setAttribute(attribute, t(node.getAttribute(`data-i18n-${attribute}`) ?? ''));
  }
}

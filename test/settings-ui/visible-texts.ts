// What a user sees of the settings page: every visible text node, placeholder, button value and
// aria-label, title and alt of the page's root, read in the browser; and the rules that set aside
// what is not to be translated (names, product names, numbers, URLs, codes, what Intl writes).
import type { Frame } from 'playwright-core';

export interface SeenText {
  /** 'text', or the attribute it came from. */
  kind: string;
  text: string;
  /** The element's id, or the nearest id above it, for failure messages. */
  where: string;
}

/** The visible texts of #la-root, each trimmed; options of visible selects count as seen. */
export function visibleTexts(frame: Frame): Promise<SeenText[]> {
  return frame.evaluate(() => {
    const root = document.getElementById('la-root');
    if (!root) return [];
    const seen: { kind: string; text: string; where: string }[] = [];
    const shown = (el: Element) => el.checkVisibility({ checkVisibilityCSS: true }) || (el instanceof HTMLOptionElement && el.parentElement?.checkVisibility() === true);
    const where = (el: Element) => {
      const named = el.closest('[id]');
      return `${el.tagName.toLowerCase()} in #${named?.id ?? '?'}`;
    };
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = (node.textContent ?? '').trim();
      const parent = node.parentElement;
      if (text === '' || !parent || parent.closest('script, style') || !shown(parent)) continue;
      seen.push({ kind: 'text', text, where: where(parent) });
    }
    for (const el of Array.from(root.querySelectorAll('[placeholder], [aria-label], [title], [alt], input[type="button"], input[type="submit"]'))) {
      if (!shown(el)) continue;
      for (const attribute of ['placeholder', 'aria-label', 'title', 'alt']) {
        const value = el.getAttribute(attribute)?.trim();
        if (value) seen.push({ kind: attribute, text: value, where: where(el) });
      }
      if (el instanceof HTMLInputElement && (el.type === 'button' || el.type === 'submit') && el.value.trim() !== '') seen.push({ kind: 'value', text: el.value.trim(), where: where(el) });
    }
    return seen;
  });
}

const PRODUCTS = ['Lock Access', 'Homebridge', 'HomeKit Secure Video', 'HomeKit', 'Apple Home', 'Google Home', 'Amazon Alexa', 'Alexa', 'SmartThings', 'Matter', 'ngrok', 'hls.js', 'ffmpeg', 'iCloud+', 'H.264', 'NTP', 'README', 'API'];

/**
 * What is left of a text once the set-aside parts are taken out: the given names and sentences the
 * plugin sent in words (an older status file), product names, URLs, e-mails, paths, codes (tokens
 * with digits, ALL-CAPS, camelCase, dotted names), dates and times as Intl writes them, and signs.
 * An empty result means the text is set aside.
 */
export function leftToTranslate(text: string, setAside: readonly string[]): string {
  let left = text;
  for (const part of [...setAside].sort((a, b) => b.length - a.length)) left = left.split(part).join(' ');
  // Dotted names first: a product name inside one (name.ngrok-free.app) would split it.
  left = left.replace(/[\w-]+(\.[\w-]+)+/g, ' ');
  for (const product of PRODUCTS) left = left.split(product).join(' ');
  left = left
    .replace(/\b[a-z]+:\/\/\S+/gi, ' ')
    .replace(/\S+@\S+/g, ' ')
    .replace(/\S*\/\S*/g, ' ')
    .replace(/\b\d{1,4}([./-])\d{1,2}\1\d{2,4}\b/g, ' ')
    .replace(/\b\d{1,2}:\d{2}(:\d{2})?(\s?[AP]M)?/g, ' ')
    .replace(/\S*\d\S*/g, ' ')
    .replace(/\b[A-Z][A-Z0-9_-]+\b/g, ' ')
    .replace(/\b[a-z]+[A-Z]\w*\b/g, ' ')
    .replace(/[\w-]+(\.[\w-]+)+/g, ' ');
  return /\p{L}/u.test(left) ? left.replace(/\s+/g, ' ').trim() : '';
}

/**
 * Sentences the plugin sent as plain words (no message code): what an older status file holds, and
 * the words of event-log entries the plugin wrote before it stored them structured. The page can
 * only show them as they are, so they are set aside; a coded message is not.
 */
export function plainSentences(answer: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'string') {
      if (value.trim().split(/\s+/).length >= 3) found.push(value);
    } else if (value && typeof value === 'object' && 'deviceName' in value && 'text' in value && typeof value.text === 'string' && !('how' in value)) {
      found.push(value.text);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object' && typeof (value as { code?: unknown }).code !== 'string') Object.values(value).forEach(walk);
  };
  walk(answer);
  return found;
}

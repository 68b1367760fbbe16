/**
 * The one home for putting customer-set text (device, driver, geofence, key,
 * client and webhook names, URLs, event fields) into the page as text.
 * lit-html's `${}` bindings are text already; the APIs that take an HTML
 * string (Leaflet's bindTooltip, bindPopup, setContent) get an element from
 * here instead, and eslint.config.js refuses the HTML sinks everywhere else
 * in panel/ (innerHTML, insertAdjacentHTML, unsafeHTML, a string tooltip).
 */
import { render, type TemplateResult } from 'lit-html';

/** An element whose text is `text`, never parsed as markup: what Leaflet's tooltips and popups get instead of a string. */
export function textElement(text: string, tag: 'span' | 'div' | 'strong' = 'span'): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = text;
  return el;
}

/** A lit-html template rendered into a fresh div (its `${}` parts are text), for a popup with more than one line. */
export function templateElement(template: TemplateResult): HTMLElement {
  const el = document.createElement('div');
  render(template, el);
  return el;
}

/** A link target from data only when it is an http(s) URL: a `javascript:` one sent by a device is never a link. */
export function linkHref(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const { protocol } = new URL(url, location.href);
    return protocol === 'https:' || protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/**
 * Browser tests' Chromium: Debian's /usr/bin/chromium driven by
 * playwright-core (which never downloads a browser), headless, with nothing
 * that reaches the network on its own, and a fresh profile per launch.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

export const LAPTOP = { width: 1366, height: 768 };
export const PHONE = { width: 390, height: 844 };

if (!hasChromium) {
  console.warn(
    `\n*** Panel browser tests SKIPPED: ${CHROMIUM} is missing. Install it with \`apt-get install -y chromium\` ` +
      '(.ci/run does this when it runs as root); playwright-core never downloads a browser. ***\n',
  );
}

export interface Browser {
  context: BrowserContext;
  /** Requests the pages made to any other origin than the platform's (must stay empty). */
  foreign: string[];
  close(): Promise<void>;
}

/** A persistent context on a fresh temporary profile: one browser, one cookie jar. */
export async function launch(base: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'fleet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: LAPTOP,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context.setDefaultTimeout(30_000);
  const foreign: string[] = [];
  const origin = new URL(base).origin;
  context.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) foreign.push(url);
  });
  return {
    context,
    foreign,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The page's whole DOM as text, with the current values of inputs (which outerHTML does not show). */
export function pageText(page: Page): Promise<string> {
  // Runs in the page (a string: this program has no DOM types).
  return page.evaluate<string>(
    "document.documentElement.outerHTML + '\\n' + [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\\n')",
  );
}

/** Saves a screenshot of the page at laptop and phone sizes under test/artifacts/ (then back to the laptop size). */
export async function screenshots(page: Page, name: string, ready: () => Promise<unknown> = async () => {}): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [size, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await ready();
    // A map still zooming (Leaflet's animation) would be caught half-scaled.
    // (A locator, not waitForFunction: the page's CSP forbids the eval that polling a string needs.)
    await page.locator('.leaflet-zoom-anim, .leaflet-pan-anim').first().waitFor({ state: 'detached' });
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    await page.screenshot({ path: join(ARTIFACTS, `panel-${name}-${size}.png`), fullPage: size === 'phone' });
    // Usable at this width: nothing makes the page scroll sideways.
    expect([name, size, await page.evaluate<number>('document.documentElement.scrollWidth')]).toEqual([name, size, viewport.width]);
  }
  await page.setViewportSize(LAPTOP);
}

/** For an afterEach: what the page looked like when a test failed, saved under ARTIFACTS for the CI log's reader. */
export async function screenshotIfFailed(ctx: { task: { name: string; result?: { state?: string } } }, page: Page | undefined, prefix: string): Promise<void> {
  if (ctx.task.result?.state !== 'fail' || !page) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${prefix}-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => {});
}

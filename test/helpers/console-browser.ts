// Headless Chromium (Debian's, driven by playwright-core) for the console's tests and bench:
// launched as the JS challenge test does, pages that record Content-Security-Policy violations
// and script errors, the axe-core check, and screenshots kept as test artefacts.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Screenshots: git-ignored, kept after the run for a person to look at. */
export const ARTEFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`headless Chromium is missing at ${CHROMIUM}: install it (Debian: apt-get install chromium)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-extensions', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Console messages about the CSP refusing something, and uncaught script errors. */
  faults: string[];
}

export async function watchedPage(browser: Browser, viewport = { width: 1280, height: 900 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const faults: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) faults.push(`csp: ${message.text()}`);
  });
  page.on('pageerror', (error) => faults.push(`script error: ${error.message}`));
  return { page, faults };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's violations of impact serious or critical on the page as it is now. The script is
 * run through the browser's debugging protocol (evaluate), which the page's CSP does not govern:
 * the CSP stays as strict as customers get it.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe.run;
    const found = await run(document, { resultTypes: ['violations'] });
    return found.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Waits until the locator (one of its matches) holds the text, case and all ("Active" is not
 * "Not active"); playwright-core has no assertion library.
 */
export async function shows(locator: Locator, text: string, timeout = 10_000): Promise<void> {
  try {
    await locator.filter({ hasText: new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) }).first().waitFor({ timeout });
  } catch {
    const now = (await locator.first().textContent({ timeout: 100 }).catch(() => null)) ?? '(nothing there)';
    throw new Error(`expected ${locator.toString()} to show "${text}" within ${timeout} ms; it shows: ${now.slice(0, 500)}`);
  }
}

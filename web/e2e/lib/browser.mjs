// Debian's Chromium driven by playwright-core (no browser download): the
// version check, the launch flags, console/CSP capture, axe and screenshots.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';

export const CHROMIUM = process.env.SEPTA_CHROMIUM ?? '/usr/bin/chromium';
// The committed screenshots (docs/portal/) are rewritten only on request, so
// that a CI run leaves the clone clean; otherwise they go to e2e/artifacts/.
export const SHOTS_DIR = new URL(process.env.SEPTA_E2E_SCREENSHOTS === 'docs' ? '../../../docs/portal/' : '../artifacts/screenshots/', import.meta.url).pathname;
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** The Chromium major playwright-core was built against (its browsers.json). */
function pinnedMajor() {
  const browsers = JSON.parse(readFileSync(new URL('../../node_modules/playwright-core/browsers.json', import.meta.url), 'utf8')).browsers;
  return Number(browsers.find((b) => b.name === 'chromium').browserVersion.split('.')[0]);
}

function playwrightVersion() {
  return JSON.parse(readFileSync(new URL('../../node_modules/playwright-core/package.json', import.meta.url), 'utf8')).version;
}

/** Throws unless the installed Chromium's major is the one playwright-core pins. */
export function checkChromiumVersion() {
  let out;
  try {
    out = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (err) {
    throw new Error(`${CHROMIUM} --version failed (install Debian's chromium): ${err.message}`);
  }
  const major = Number(/(\d+)\.\d+\.\d+\.\d+/.exec(out)?.[1]);
  const want = pinnedMajor();
  if (major !== want) throw new Error(`${CHROMIUM} is ${out.trim()}, but playwright-core ${playwrightVersion()} drives Chromium ${want}; install that major`);
  return out.trim();
}

export async function launch() {
  checkChromiumVersion();
  const userDataDir = mkdtempSync(join(tmpdir(), 'septa-web-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Records console errors, uncaught page errors and CSP violations of a page
 * (Chromium reports CSP refusals as console errors starting "Refused to").
 */
export function watchConsole(page) {
  const problems = [];
  // With the URL: "Failed to load resource" does not name the resource in its text.
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}${msg.location().url ? ` (${msg.location().url})` : ''}`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return problems;
}

/** axe with the WCAG 2.2 AA tags and target-size enabled; the violations, summarised. */
export async function axeViolations(page) {
  const result = await new AxeBuilder({ page }).withTags(AXE_TAGS).options({ rules: { 'target-size': { enabled: true } } }).analyze();
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
}

export async function screenshot(page, name) {
  mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SHOTS_DIR, `${name}.png`), fullPage: false });
}

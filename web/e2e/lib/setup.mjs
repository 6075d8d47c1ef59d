// One portal under test: a septad of its own serving web/dist, and the
// Chromium page that signs in to it. A septad built before the portal's
// server side (no --web-dir) cannot serve it: every browser test then skips,
// saying why.
import { septadFeatures, startSeptad, WEB_DIST } from './septad.mjs';
import { restClient } from './rest.mjs';
import { launch, watchConsole } from './browser.mjs';

export function portalMode() {
  const { webDir } = septadFeatures();
  if (webDir) return { skipBrowser: false };
  const why = 'SKIPPED: this septad has no --web-dir (built before the portal\'s server side); build septad from a tree with it';
  return { skipBrowser: why };
}

export async function startPortal(opts = {}) {
  const septad = await startSeptad({ ...opts, webDir: WEB_DIST });
  return {
    septad,
    /** where the browser goes: septad's REST listener */
    base: septad.base,
    admin: restClient(septad.base, septad.adminToken),
    /** the one-time admin sign-in link septad wrote, if any */
    signInLink: () => septad.signInLink(),
    stop: () => septad.stop(),
  };
}

/**
 * A portal, the fixtures `fixtures(portal)` makes over REST, then Chromium
 * with one page whose console errors, page errors and CSP refusals are
 * recorded (`problems`). `close()` stops both.
 */
export async function openPortal(fixtures = async () => {}, opts = {}) {
  const portal = await startPortal(opts);
  let browser;
  try {
    await fixtures(portal);
    browser = await launch();
    const page = await browser.context.newPage();
    const close = async () => {
      await browser.close();
      await portal.stop();
    };
    return { portal, browser, page, problems: watchConsole(page), close };
  } catch (err) {
    await browser?.close();
    await portal.stop();
    throw err;
  }
}

/** Signs in on the sign-in page (or `path`, which leads there) by pasting `token`; returns once the app has left it. */
export async function signIn(page, base, token, path = '/sign-in') {
  await page.goto(base + path);
  await page.getByLabel('API token (required)').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname !== '/sign-in');
}

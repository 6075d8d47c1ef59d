// The portal's polling costs septad a hash, not a transfer: a list answered
// with a weak ETag and `private, no-cache` is kept by Chromium and
// revalidated on every fetch, and septad answers 304 while nothing changed
// (counted by septad's own /metrics). The page still shows the list.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPortal, portalMode, signIn } from './lib/setup.mjs';
import { eventually, tenantWithToken } from './lib/rest.mjs';

// The sign-in page's session check is answered 401 while signed out, which
// Chromium logs as a console error; it is not a fault of the page.
const SIGNED_OUT = /Failed to load resource: the server responded with a status of 401 (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\/sessions\/current/;

const mode = portalMode();
const LIST_ROUTE = '/v1/tenants/{tenant}/vclusters';

/** GETs of the virtual cluster list septad answered with `code`, from its /metrics (an admin's). */
async function answered(portal, code) {
  const { text } = await portal.admin.req('GET', '/metrics');
  const line = text
    .split('\n')
    .find((l) => l.startsWith('septa_http_requests_total{') && l.includes(`code="${code}"`) && l.includes('method="GET"') && l.includes(`route="${LIST_ROUTE}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('polling revalidates', () => {
  let suite, token;
  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(async (p) => {
      token = await tenantWithToken(p.admin, 'e2e-poll', 'dedicated');
    });
  });
  after(async () => suite?.close());

  it('the list page polls with If-None-Match and septad answers 304 while nothing changed', { skip: mode.skipBrowser }, async () => {
    const { portal, page, problems } = suite;
    await signIn(page, portal.base, token);
    await page.goto(`${portal.base}/t/e2e-poll/vclusters`);
    await page.locator('[data-loaded="vclusters"]').waitFor();
    const before304 = await answered(portal, 304);
    // The page polls on its own schedule (tens of seconds at most while nothing changes).
    await eventually(async () => (await answered(portal, 304)) > before304, { timeoutMs: 45_000, what: 'a 304 for the polled list' });
    await page.locator('[data-loaded="vclusters"]').waitFor();
    assert.deepEqual(problems.filter((p) => !SIGNED_OUT.test(p)), [], 'no console error or CSP report');
  });
});

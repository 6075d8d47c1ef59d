// The portal in Chromium against a septad of its own: a tenant's whole
// lifecycle of a virtual cluster, the per-tier forms, errors beside fields,
// isolation between tenants, sessions, CSP, XSS, accessibility.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { axeViolations, screenshot } from './lib/browser.mjs';
import { openPortal, portalMode, signIn } from './lib/setup.mjs';
import { eventually, restClient, tenantWithToken } from './lib/rest.mjs';

const XSS = '<img src=x onerror=alert(1)>';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TIERS = ['shared', 'isolated', 'exclusive', 'dedicated'];
// Chromium logs every HTTP error answer to fetch() as a console error; the
// refusals these tests provoke on purpose, the form's live checks of
// requests that do not fit yet, and the offline test's failed fetches are not
// faults of the page. Only answers of the API: a page or asset that fails to
// load (an icon, say) is one.
const EXPECTED_HTTP = /Failed to load resource: (the server responded with a status of (400|401|403|404|409|412|429)|net::ERR_INTERNET_DISCONNECTED) (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\//;

const mode = portalMode();
// Skips are per test (not per suite) so that node's summary counts each one
// as skipped, with the reason, and never as passed.
const browserIt = (name, fn) => it(name, { skip: mode.skipBrowser }, fn);

describe('portal', () => {
  let suite, portal, page, problems;
  const tokens = {};

  const url = (path) => portal.base + path;
  const pathOf = () => new URL(page.url()).pathname + new URL(page.url()).search;
  const unexpected = () => problems.filter((p) => !EXPECTED_HTTP.test(p));

  const signInWithToken = (token, path) => signIn(page, portal.base, token, path);

  async function signOut() {
    await page.context().clearCookies();
  }

  async function expectAxeClean(label) {
    assert.deepEqual(await axeViolations(page), [], `axe on ${label}`);
  }

  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(async ({ admin }) => {
      for (const tier of TIERS) {
        tokens[tier] = await tenantWithToken(admin, `e2e-${tier}`, tier, {
          display_name: tier === 'shared' ? XSS : `E2E ${tier}`,
          quota: { gpu_milli: 4000, vclusters: 10 },
        });
      }
      tokens.other = await tenantWithToken(admin, 'e2e-other', 'shared');
      await admin.ok('POST', '/v1/tenants/e2e-other/vclusters', { name: 'secret', capacity: { shared: { milli_gpu: 100, gpu_memory_mib: 1000 } } });
    });
    ({ portal, page, problems } = suite);
  });

  after(async () => {
    await suite?.close();
  });

  browserIt('a signed-out visit goes to sign-in, and signing in with a pasted token comes back to the page', async () => {
    await page.goto(url('/t/e2e-shared/vclusters'));
    await page.waitForURL((u) => u.pathname === '/sign-in');
    assert.equal(new URL(page.url()).searchParams.get('next'), '/t/e2e-shared/vclusters');
    await expectAxeClean('sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('API token (required)').fill(tokens.shared);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters');
    await page.getByRole('heading', { name: 'Virtual clusters of e2e-shared' }).waitFor();
  });

  browserIt('a wrong token is refused on the sign-in page', async () => {
    await signOut();
    await page.goto(url('/sign-in'));
    await page.getByLabel('API token (required)').fill('septa_0000000000000000_nope');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/sign-in');
  });

  browserIt('the shared tier: create from the form, READY without a reload, kubeconfig for kubectl, resize, sleep, wake, delete', async () => {
    await signInWithToken(tokens.shared);
    await page.goto(url('/t/e2e-shared/vclusters'));
    await page.getByRole('link', { name: 'New virtual cluster' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters/new');
    const form = page.locator('form[data-kind]');
    assert.equal(await form.getAttribute('data-kind'), 'shared');
    // Only the shared kind's inputs: no whole GPU, MIG or node option.
    const names = await form.locator('input, select').evaluateAll((els) => els.map((e) => e.getAttribute('name')));
    assert.ok(names.includes('capacity.shared.milli_gpu') && names.includes('capacity.shared.gpu_memory_mib'), names.join());
    assert.deepEqual(names.filter((n) => /^capacity\.(gpus|mig|nodes)/.test(n ?? '')), []);
    await expectAxeClean('new virtual cluster form');
    await page.getByLabel('Name (required)').fill('train');
    await page.getByLabel('GPU share (thousandths of a GPU)').fill('500');
    await page.getByLabel('GPU memory (MiB)').fill('8000');
    await screenshot(page, 'vcluster-new');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters/train');
    const state = page.getByTestId('vc-state');
    await state.filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Kubeconfig' }).waitFor();
    await expectAxeClean('virtual cluster detail');
    await screenshot(page, 'vcluster-detail');

    // Kubeconfig: download it and use it with the real kubectl.
    await page.getByLabel('Role').selectOption('edit');
    await page.getByLabel('Lifetime').fill('1h');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download kubeconfig' }).click();
    const file = await (await download).path();
    const out = execFileSync('kubectl', ['--kubeconfig', file, 'get', 'namespaces', '-o', 'name'], { encoding: 'utf8', timeout: 30_000 });
    assert.match(out, /namespace\/default/);
    await page.getByRole('button', { name: 'Copy kubeconfig' }).waitFor();
    const serial = (await page.locator('.issued').textContent()).match(/certificate ([0-9a-f]+)/)[1];
    // The Overview lists it among the credentials that expire within a day.
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await page
      .getByRole('region', { name: 'Credentials expiring within a day' })
      .getByText(`Kubeconfig certificate ${serial} of train (edit)`, { exact: false })
      .waitFor();
    await page.goto(url('/t/e2e-shared/vclusters/train'));
    const credential = page.locator(`tr[data-serial="${serial}"]`);
    await credential.waitFor();
    // Revoking it in the portal makes the virtual cluster's API refuse it.
    await page.getByRole('button', { name: `Revoke certificate ${serial}` }).click();
    await credential.getByText(/^revoked/).waitFor();
    await eventually(() => {
      try {
        execFileSync('kubectl', ['--kubeconfig', file, 'get', 'namespaces'], { stdio: 'ignore', timeout: 30_000 });
        return false;
      } catch {
        return true;
      }
    }, { timeoutMs: 30_000, what: 'kubectl refused with the revoked certificate' });

    // Resize.
    await page.getByRole('link', { name: 'Resize' }).click();
    await page.getByLabel('GPU share (thousandths of a GPU)').fill('750');
    await page.getByRole('button', { name: 'Resize' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters/train');
    await page.getByText('0.75 GPU share, 8000 MiB').waitFor();
    const vc = await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/vclusters/train');
    assert.equal(vc.capacity.shared.milli_gpu, 750);

    // Sleep and wake.
    await state.filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Sleep' }).click();
    await state.filter({ hasText: /^SLEEPING$/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Wake' }).click();
    await state.filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });

    // Delete: the name must be typed.
    assert.equal(await page.getByRole('form', { name: 'Delete virtual cluster' }).count(), 1);
    await page.getByLabel('Type the name, train, to confirm').fill('tra');
    await page.getByRole('button', { name: 'Delete virtual cluster' }).click();
    await page.getByRole('alert').filter({ hasText: 'Type “train” to confirm' }).waitFor();
    await page.getByLabel('Type the name, train, to confirm').fill('train');
    await page.getByRole('button', { name: 'Delete virtual cluster' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters');
    await page.locator('[data-loaded="vclusters"]').waitFor();
    // DELETING until the provisioner has removed it; the list polls until it is gone.
    await page.locator('tr[data-vcluster="train"]').waitFor({ state: 'detached', timeout: 60_000 });
    const gone = await restClient(portal.septad.base, tokens.shared).req('GET', '/v1/tenants/e2e-shared/vclusters/train');
    assert.equal(gone.status, 404);
  });

  browserIt('a request that does not fit shows the server’s error beside the field and creates nothing', async () => {
    await page.goto(url('/t/e2e-shared/vclusters/new'));
    await page.getByLabel('Name (required)').fill('huge');
    await page.getByLabel('GPU share (thousandths of a GPU)').fill('50000');
    await page.getByLabel('GPU memory (MiB)').fill('8000');
    await page.getByRole('button', { name: 'Create' }).click();
    const err = page.locator('[data-field-error="capacity.shared.milli_gpu"]');
    await err.waitFor();
    assert.match(await err.textContent(), /GPU-equivalents requested/);
    assert.equal(await page.getByLabel('GPU share (thousandths of a GPU)').getAttribute('aria-invalid'), 'true');
    const describedBy = await page.getByLabel('GPU share (thousandths of a GPU)').getAttribute('aria-describedby');
    assert.ok(describedBy.split(' ').includes(await err.getAttribute('id')), 'the error is the input’s description');
    assert.equal(new URL(page.url()).pathname, '/t/e2e-shared/vclusters/new');
    await expectAxeClean('form with a field error');
    await screenshot(page, 'vcluster-new-refused');
    const list = await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/vclusters');
    assert.deepEqual(list.virtual_clusters.map((v) => v.name).filter((n) => n === 'huge'), []);
  });

  browserIt('the form checks the request with the server while typing (validate_only), keeping nothing', async () => {
    await page.goto(url('/t/e2e-shared/vclusters/new'));
    const share = page.getByLabel('GPU share (thousandths of a GPU)');
    await page.getByLabel('GPU memory (MiB)').fill('1000');
    await share.fill('50000');
    const err = page.locator('[data-field-error="capacity.shared.milli_gpu"]');
    await err.waitFor();
    assert.match(await err.textContent(), /GPU-equivalents requested/);
    await share.fill('100');
    await err.waitFor({ state: 'detached' });
    await page.locator('[data-check]').filter({ hasText: /^Fits now: would reserve 100 milli-GPU on \S+ GPU \d+\.$/ }).waitFor();
    const names = (await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/vclusters')).virtual_clusters.map((v) => v.name);
    assert.deepEqual(names.filter((n) => n !== 'demo'), [], 'checks create nothing');
    assert.equal((await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/quota')).usage.gpu_milli, names.includes('demo') ? '250' : '0');
  });

  browserIt('tenant A opening tenant B’s pages sees “not found”', async () => {
    await page.goto(url('/t/e2e-other/vclusters/secret'));
    await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor();
    await page.goto(url('/t/e2e-other'));
    await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor();
    assert.equal(await page.getByText('secret', { exact: true }).count(), 0);
  });

  browserIt('the overview shows quota, holdings and states, and renders a hostile display name as text', async () => {
    await restClient(portal.septad.base, tokens.shared).ok('POST', '/v1/tenants/e2e-shared/vclusters', { name: 'demo', capacity: { shared: { milli_gpu: 250, gpu_memory_mib: 4000 } } });
    await page.goto(url('/t/e2e-shared'));
    await page.locator('[data-loaded="overview"]').waitFor();
    const name = page.locator('.display-name').first();
    assert.equal(await name.textContent(), XSS);
    assert.equal(await page.locator('main img').count(), 0);
    assert.match(await page.locator('tr[data-quota="gpu_milli"]').textContent(), /0\.25.*4/);
    assert.equal(await page.locator('meter').count() >= 2, true);
    await expectAxeClean('overview');
    await screenshot(page, 'overview');
    await page.goto(url('/t/e2e-shared/vclusters'));
    await page.locator('tr[data-vcluster="demo"]').waitFor();
    await expectAxeClean('virtual cluster list');
    await screenshot(page, 'vclusters');
  });

  browserIt('API tokens: the secret is shown once, it works, and revoking it ends it', async () => {
    await page.goto(url('/tokens'));
    await page.getByLabel('Description').fill('from the portal');
    await page.getByLabel('Lifetime').fill('2h');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('[data-secret]').textContent()).trim();
    assert.match(secret, /^septa_/);
    await expectAxeClean('API tokens');
    await screenshot(page, 'tokens');
    const rest = restClient(portal.septad.base, secret);
    assert.equal((await rest.req('GET', '/v1/tenants/e2e-shared')).status, 200);
    await page.reload();
    await page.locator('tr[data-token]').first().waitFor();
    assert.equal(await page.locator('[data-secret]').count(), 0, 'shown once only');
    const id = /^septa_([0-9a-f]+)_/.exec(secret)[1];
    await page.getByRole('button', { name: `Revoke token ${id}` }).click();
    await page.locator(`tr[data-token="${id}"]`).getByText(/^revoked/).waitFor();
    assert.equal((await rest.req('GET', '/v1/tenants/e2e-shared')).status, 401);
  });

  browserIt('a lost connection shows the banner, and it clears once requests get through', async () => {
    await page.goto(url('/t/e2e-shared/vclusters'));
    await page.locator('[data-loaded="vclusters"]').waitFor();
    await page.context().setOffline(true);
    await page.getByRole('link', { name: 'Overview' }).click();
    const banner = page.getByRole('status').filter({ hasText: 'Connection to Septa lost; retrying' });
    await banner.waitFor();
    await page.context().setOffline(false);
    await page.locator('[data-loaded="overview"]').waitFor({ timeout: 30_000 });
    await banner.waitFor({ state: 'detached' });
  });

  browserIt('a session that ends mid-visit returns to sign-in and back to the same page', async () => {
    await page.goto(url('/t/e2e-shared/vclusters?state=READY'));
    await page.locator('[data-loaded="vclusters"]').waitFor();
    await page.context().clearCookies();
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL((u) => u.pathname === '/sign-in');
    assert.equal(new URL(page.url()).searchParams.get('next'), '/t/e2e-shared');
    await page.getByLabel('API token (required)').fill(tokens.shared);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared');
    await page.locator('[data-loaded="overview"]').waitFor();
  });

  browserIt('keyboard only: sign in, skip link, reach and follow a nav link, with a visible focus ring', async () => {
    await signOut();
    await page.goto(url('/sign-in?next=%2Ft%2Fe2e-shared'));
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      return { text: (el?.textContent ?? '').trim(), label: el?.getAttribute('name') ?? '', outline: el ? getComputedStyle(el).outlineStyle : 'none' };
    });
    const tabTo = async (match, max = 25) => {
      for (let i = 0; i < max; i++) {
        await page.keyboard.press('Tab');
        const f = await focused();
        if (match(f)) return f;
      }
      throw new Error('not reachable by Tab');
    };
    await tabTo((f) => f.label === 'token');
    await page.keyboard.insertText(tokens.shared);
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared');
    await page.locator('[data-loaded="overview"]').waitFor();
    const skip = await tabTo((f) => f.text === 'Skip to content', 3);
    assert.notEqual(skip.outline, 'none', 'focus ring on the skip link');
    const nav = await tabTo((f) => f.text === 'Virtual clusters');
    assert.notEqual(nav.outline, 'none', 'focus ring on a nav link');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/t/e2e-shared/vclusters');
    // Focus moves to the new page's main region (in an effect after the render).
    await page.waitForFunction(() => document.activeElement?.id === 'main');
  });

  browserIt('a viewer sees no write controls, may issue only view kubeconfigs, and a write it forces is refused', async () => {
    const viewer = (await portal.admin.ok('POST', '/v1/tokens', { principal: 'tenant:e2e-shared', role: 'viewer' })).token;
    await signOut();
    await signInWithToken(viewer);
    await page.goto(url('/t/e2e-shared/vclusters'));
    await page.locator('tr[data-vcluster="demo"]').waitFor();
    assert.equal(await page.getByRole('link', { name: 'New virtual cluster' }).count(), 0);
    await page.goto(url('/t/e2e-shared/vclusters/demo'));
    await page.getByTestId('vc-state').filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Kubeconfig' }).waitFor();
    for (const name of ['Resize', 'Sleep']) assert.equal(await page.getByRole('button', { name }).or(page.getByRole('link', { name })).count(), 0, name);
    assert.equal(await page.getByRole('form', { name: 'Delete virtual cluster' }).count(), 0);
    assert.deepEqual(await page.getByLabel('Role').locator('option').allTextContents(), ['view']);
    await expectAxeClean('detail as a viewer');
    await page.goto(url('/t/e2e-shared/vclusters/new'));
    await page.getByLabel('Name (required)').fill('by-viewer');
    await page.getByLabel('GPU share (thousandths of a GPU)').fill('10');
    await page.getByLabel('GPU memory (MiB)').fill('100');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('[data-form-error]').waitFor();
    assert.equal((await portal.admin.req('GET', '/v1/tenants/e2e-shared/vclusters/by-viewer')).status, 404);
  });

  browserIt('signing out ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/sign-in');
    const status = await page.evaluate(async () => (await fetch('/v1/sessions/current')).status);
    assert.equal(status, 401);
  });

  browserIt('each trust tier’s form offers only its capacity kind; an isolated cluster is created with MIG', async () => {
    const link = portal.signInLink();
    if (link) {
      await page.goto(link);
    } else {
      await signInWithToken(portal.septad.adminToken);
    }
    await page.waitForURL((u) => u.pathname === '/admin/tenants');
    const expected = { shared: 'shared', isolated: 'mig', exclusive: 'nodes', dedicated: 'gpus' };
    for (const tier of TIERS) {
      await page.goto(url(`/t/e2e-${tier}/vclusters/new`));
      const form = page.locator('form[data-kind]');
      await form.waitFor();
      assert.equal(await form.getAttribute('data-kind'), expected[tier], tier);
      const names = await form.locator('input, select').evaluateAll((els) => els.map((e) => e.getAttribute('name')));
      const kinds = new Set(names.filter((n) => n?.startsWith('capacity.')).map((n) => n.split(/[.[]/)[1]));
      assert.deepEqual([...kinds], [expected[tier]], `${tier}: ${names.join()}`);
    }
    await page.goto(url('/t/e2e-isolated/vclusters/new'));
    await page.getByLabel('Name (required)').fill('mig1');
    await page.getByLabel('MIG profile, row 1').selectOption('1g.10gb');
    await page.getByLabel('MIG instances, row 1').fill('2');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-isolated/vclusters/mig1');
    await page.getByTestId('vc-state').filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    assert.equal(await page.getByRole('row', { name: /MIG 1g\.10gb on/ }).count(), 2);
  });

  browserIt('admin pages: tenants (create with tier and quota, suspend, delete), inventory, trust tiers — axe clean', async () => {
    await page.goto(url('/admin/tenants'));
    const create = page.getByRole('form', { name: 'New tenant' });
    await create.getByLabel('Name (required)').fill('e2e-made');
    await create.getByLabel('Trust tier').selectOption('dedicated');
    await create.getByLabel('GPU-equivalents (thousandths)').fill('2000');
    await create.getByRole('button', { name: 'Create tenant' }).click();
    const row = page.locator('tr[data-tenant="e2e-made"]');
    await row.waitFor();
    const made = await portal.admin.ok('GET', '/v1/tenants/e2e-made');
    assert.deepEqual([made.trust_tier, made.quota.gpu_milli], ['dedicated', 2000]);
    await expectAxeClean('tenants');
    await screenshot(page, 'admin-tenants');
    await row.getByText('Edit the quota of e2e-made').click();
    await row.getByLabel('Virtual clusters').fill('3');
    await row.getByLabel('GPU-equivalents (thousandths)').fill('');
    await row.getByRole('button', { name: 'Save quota of e2e-made' }).click();
    await row.getByText('3 vclusters').waitFor();
    assert.deepEqual((await portal.admin.ok('GET', '/v1/tenants/e2e-made')).quota, { vclusters: 3 });
    await row.getByRole('button', { name: 'Suspend e2e-made' }).click();
    await row.getByRole('button', { name: 'Resume e2e-made' }).waitFor();
    assert.equal((await portal.admin.ok('GET', '/v1/tenants/e2e-made')).state, 'SUSPENDED');
    await row.getByRole('button', { name: 'Delete… e2e-made' }).click();
    await row.getByLabel('Type the name, e2e-made, to confirm').fill('e2e-made');
    await row.getByRole('button', { name: 'Delete tenant e2e-made' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await portal.admin.req('GET', '/v1/tenants/e2e-made')).status, 404);

    await page.goto(url('/admin/inventory'));
    await page.locator('[data-loaded="inventory"]').waitFor();
    assert.ok((await page.locator('tr[data-gpu]').count()) > 0);
    await expectAxeClean('inventory');
    await screenshot(page, 'admin-inventory');
    await page.goto(url('/admin/trust-tiers'));
    await page.locator('[data-loaded="tiers"]').waitFor();
    assert.equal(await page.locator('[data-loaded="tiers"] tbody tr').count(), 4);
    await expectAxeClean('trust tiers');
    await screenshot(page, 'admin-trust-tiers');
    await page.goto(url('/t/e2e-isolated'));
    await page.locator('[data-loaded="overview"]').waitFor();
    await expectAxeClean('overview as admin (free capacity)');
  });

  browserIt('the pages logged no console error, uncaught error or CSP violation', () => {
    assert.deepEqual(unexpected(), []);
  });

  describe('septad’s own security behaviour', () => {
    browserIt('the app is served with the strict CSP, on / and on a client route', async () => {
      for (const path of ['/', '/t/e2e-shared/vclusters/demo']) {
        const r = await fetch(url(path));
        assert.equal(r.status, 200, path);
        assert.equal(r.headers.get('content-security-policy'), CSP, path);
        assert.match(await r.text(), /<div id="app">/);
      }
    });

    browserIt('the page links its icon, which septad serves as SVG (so Chromium asks for no /favicon.ico)', async () => {
      const href = /<link rel="icon" href="([^"]+)"/.exec(await (await fetch(url('/'))).text())?.[1];
      assert.ok(href, 'an icon is linked');
      const r = await fetch(url(href));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'image/svg+xml');
      assert.match(await r.text(), /^<svg /);
    });

    browserIt('the session cookie is HttpOnly and SameSite=Strict, and the page cannot read it', async () => {
      await signOut();
      await signInWithToken(tokens.shared);
      const cookies = await page.context().cookies(portal.base);
      const session = cookies.find((c) => /septa_session$/.test(c.name));
      assert.ok(session, cookies.map((c) => c.name).join());
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');
      assert.equal(await page.evaluate(() => document.cookie.includes('septa_session')), false);
    });

    browserIt('an unsafe request with the cookie is refused without this origin or without the CSRF token', async () => {
      const session = (await page.context().cookies(portal.base)).find((c) => /septa_session$/.test(c.name));
      const csrf = await page.evaluate(async () => (await (await fetch('/v1/sessions/current')).json()).csrf_token);
      const post = (headers) =>
        fetch(url('/v1/tenants/e2e-shared/vclusters'), {
          method: 'POST',
          headers: { Cookie: `${session.name}=${session.value}`, 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify({ name: 'forged', capacity: { shared: { milli_gpu: 10, gpu_memory_mib: 100 } } }),
        });
      assert.equal((await post({ Origin: 'http://127.0.0.1:1', 'X-Septa-CSRF': csrf })).status, 403, 'foreign Origin');
      assert.equal((await post({ 'X-Septa-CSRF': csrf })).status, 403, 'no Origin');
      assert.equal((await post({ Origin: portal.base })).status, 403, 'no CSRF token');
      assert.equal((await post({ Origin: portal.base, 'X-Septa-CSRF': 'x' + csrf })).status, 403, 'wrong CSRF token');
      const list = await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/vclusters');
      assert.equal(list.virtual_clusters.some((v) => v.name === 'forged'), false);
    });

    browserIt('a page of another origin cannot make the browser act with the cookie', async () => {
      const target = url('/v1/tenants/e2e-shared/vclusters');
      const evil = createServer((_, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end(`<!doctype html><title>evil</title><script>
          fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include',
            headers: { 'Content-Type': 'text/plain' },
            body: JSON.stringify({ name: 'evil', capacity: { shared: { milli_gpu: 10, gpu_memory_mib: 100 } } }) })
            .then(() => { document.title = 'sent'; }, () => { document.title = 'sent'; });
        </script>`);
      });
      evil.listen(0, '127.0.0.1');
      await once(evil, 'listening');
      try {
        const other = await page.context().newPage();
        await other.goto(`http://127.0.0.1:${evil.address().port}/`);
        await other.waitForFunction(() => document.title === 'sent');
        await other.close();
      } finally {
        evil.close();
      }
      const list = await restClient(portal.septad.base, tokens.shared).ok('GET', '/v1/tenants/e2e-shared/vclusters');
      assert.equal(list.virtual_clusters.some((v) => v.name === 'evil'), false);
    });

    browserIt('septad wrote a one-time sign-in link for this origin, and it works once only', async () => {
      const link = portal.signInLink();
      assert.ok(link, 'no data_dir/sign-in-link');
      assert.equal(new URL(link).origin, portal.base);
      assert.match(new URL(link).hash, /^#code=./);
      // Spent by the admin sign-in earlier in this file: a second use is refused.
      await signOut();
      await page.goto(link);
      await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the code is removed from the address bar');
    });
  });
});

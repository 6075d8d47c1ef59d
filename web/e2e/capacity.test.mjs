// What is free (GET /v1/tenants/{tenant}/free-capacity) on the Overview and
// beside the create form, and for every kind (GET /v1/inventory/free-capacity)
// on the admin Inventory page; a MIG request of two rows made in the form; the
// Usage page's "Allocated now" (usage.test.mjs has the rest of that page); in
// Chromium against a septad of its own. Every figure the page must show is
// read from septad over REST in the same test, never written in here.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, screenshot } from './lib/browser.mjs';
import { openPortal, portalMode, signIn as signInOn } from './lib/setup.mjs';
import { restClient, tenantWithToken } from './lib/rest.mjs';
import { expectedFree, freeTable } from './lib/free.mjs';

// Chromium logs every HTTP error answer as a console error; these are not
// faults of the page: the form's live check answers 400 while a row's count
// is 0 (on purpose here), the sign-in page's session check 401 while signed
// out. Only answers of the API: a page or asset that fails to load is a fault.
const EXPECTED_HTTP = /Failed to load resource: the server responded with a status of (400|401) (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\//;

const mode = portalMode();
const browserIt = (name, fn) => it(name, { skip: mode.skipBrowser }, fn);

const exactly = (text) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

/** Instances per profile in a reservation: { '3g.40gb': 1, … }. */
function profilesOf(reservation) {
  const out = {};
  for (const m of reservation?.mig ?? []) out[m.profile] = (out[m.profile] ?? 0) + 1;
  return out;
}

describe('free capacity, MIG rows and usage', () => {
  let suite, portal, page, problems, tenant;

  const url = (path) => portal.base + path;
  const expectAxeClean = async (label) => assert.deepEqual(await axeViolations(page), [], `axe on ${label}`);
  const focusedName = () => page.evaluate(() => document.activeElement?.getAttribute('name') ?? document.activeElement?.textContent);

  async function signIn(token) {
    await page.context().clearCookies();
    await signInOn(page, portal.base, token);
  }

  /** The Overview's free-capacity table for `sharing`, as freeTable reads it. */
  async function overviewFree(path, sharing) {
    await page.goto(url(path));
    await page.locator('[data-loaded="overview"]').waitFor();
    return freeTable(page, sharing);
  }

  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(async (p) => {
      const token = await tenantWithToken(p.admin, 'e2e-iso', 'isolated', { quota: { gpu_milli: 20000, vclusters: 10 } });
      tenant = restClient(p.base, token);
      tenant.token = token;
      await p.admin.ok('POST', '/v1/tenants', { name: 'e2e-empty', trust_tier: 'isolated' });
      await p.admin.ok('POST', '/v1/tenants', { name: 'e2e-frac', trust_tier: 'shared' });
    });
    ({ portal, page, problems } = suite);
  });

  after(async () => {
    await suite?.close();
  });

  browserIt('the Overview shows the free MIG instances the endpoint returns for an isolated tenant', async () => {
    const free = await tenant.ok('GET', '/v1/tenants/e2e-iso/free-capacity');
    assert.equal(free.gpu_sharing, 'MIG');
    assert.ok(free.mig.length > 0, 'the default inventory has free MIG instances');
    await signIn(tenant.token);
    assert.deepEqual(await overviewFree('/t/e2e-iso', 'MIG'), expectedFree(free));
    await page.getByRole('heading', { name: 'Free for your tier now' }).waitFor();
    await expectAxeClean('overview of an isolated tenant');
    await screenshot(page, 'overview-isolated');
  });

  browserIt('a two-row MIG request: what is free beside each row, rows added and removed by keyboard, the error on the row the server names, created with both profiles', async () => {
    const free = await tenant.ok('GET', '/v1/tenants/e2e-iso/free-capacity');
    const profiles = [...new Set(free.mig.filter((m) => m.count > 0).map((m) => m.profile))];
    assert.ok(profiles.length >= 2, `two profiles free: ${JSON.stringify(free.mig)}`);
    const [p1, p2] = profiles;
    const freeOf = (p) => free.mig.filter((m) => m.profile === p).reduce((s, m) => s + m.count, 0);

    await page.goto(url('/t/e2e-iso/vclusters/new'));
    await page.getByLabel('Name (required)').fill('two-mig');
    await page.getByLabel('MIG profile, row 1').selectOption(p1);
    await page.getByLabel('MIG instances, row 1').fill('1');
    await page.locator('[data-free="capacity.mig[0].count"]').filter({ hasText: exactly(`Free now: ${freeOf(p1)} × ${p1}.`) }).waitFor();

    // Add a row with the keyboard: focus goes to the new row's profile.
    await page.getByRole('button', { name: 'Add a MIG row' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'capacity.mig[1].profile');
    await page.getByLabel('MIG profile, row 2').selectOption(p2);
    await page.locator('[data-free="capacity.mig[1].count"]').filter({ hasText: exactly(`Free now: ${freeOf(p2)} × ${p2}.`) }).waitFor();

    // A count of 0 in row 2: the live check puts septad's error beside that row's field.
    await page.getByLabel('MIG instances, row 2').fill('0');
    const err = page.locator('[data-field-error="capacity.mig[1].count"]');
    await err.waitFor();
    assert.equal(await page.getByLabel('MIG instances, row 2').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('[data-field-error="capacity.mig[0].count"]').count(), 0, 'row 1 is not blamed');
    await expectAxeClean('MIG form with an error on row 2');

    // A third row, removed again with the keyboard: focus returns to the row before it.
    await page.getByRole('button', { name: 'Add a MIG row' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Remove row 3' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'capacity.mig[1].profile');
    assert.equal(await page.locator('[data-mig-row]').count(), 2, await focusedName());

    await page.getByLabel('MIG instances, row 2').fill('1');
    await err.waitFor({ state: 'detached' });
    const fits = page.locator('[data-check]').filter({ hasText: /^Fits now: would reserve / });
    await fits.waitFor();
    for (const p of [p1, p2]) assert.ok((await fits.textContent()).includes(`${p} on `), `${p} in: ${await fits.textContent()}`);
    await expectAxeClean('MIG form with two rows');
    await page.locator('[data-mig-row="0"]').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'vcluster-new-mig');

    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-iso/vclusters/two-mig');
    await page.getByTestId('vc-state').filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    for (const p of [p1, p2]) assert.equal(await page.getByRole('row', { name: new RegExp(`MIG ${p.replace('.', '\\.')} on`) }).count(), 1, p);
    const vc = await tenant.ok('GET', '/v1/tenants/e2e-iso/vclusters/two-mig');
    assert.deepEqual(vc.capacity.mig.map((m) => [m.profile, m.count]), [[p1, 1], [p2, 1]]);
    assert.deepEqual(profilesOf(vc.reservation), { [p1]: 1, [p2]: 1 });
  });

  browserIt('the Usage page shows what each virtual cluster holds now against the quota — axe clean', async () => {
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/t/e2e-iso/usage');
    await page.locator('[data-loaded="usage-now"]').waitFor();
    await page.locator('[data-loaded="usage"]').waitFor();
    const vc = await tenant.ok('GET', '/v1/tenants/e2e-iso/vclusters/two-mig');
    const held = Object.entries(profilesOf(vc.reservation)).sort().map(([p, n]) => `${n}× ${p}`).join(', ');
    assert.equal(await page.locator('tr[data-usage="two-mig"] [data-held]').textContent(), held);
    const quota = await tenant.ok('GET', '/v1/tenants/e2e-iso/quota');
    assert.ok(Number(quota.usage.gpu_milli) > 0);
    assert.match(await page.locator('[data-usage-total]').textContent(), new RegExp(`^Allocated now: ${Number(quota.usage.gpu_milli) / 1000} GPU-equivalents of ${quota.limits.gpu_milli / 1000} `));
    await expectAxeClean('usage');
  });

  browserIt('an admin sees the same free figures on the tenant’s Overview, and an empty Usage page — axe clean', async () => {
    await signIn(portal.septad.adminToken);
    const free = await portal.admin.ok('GET', '/v1/tenants/e2e-iso/free-capacity');
    assert.deepEqual(await overviewFree('/t/e2e-iso', 'MIG'), expectedFree(free));
    await page.getByRole('heading', { name: 'Free for this tier now' }).waitFor();
    await expectAxeClean('overview of an isolated tenant, as admin');
    await page.goto(url('/t/e2e-empty/usage'));
    await page.locator('[data-loaded="usage"]').waitFor();
    await page.locator('[data-usage-empty]').waitFor();
    await page.getByText('No virtual clusters: nothing is allocated.').waitFor();
    await expectAxeClean('usage with no virtual clusters');
  });

  browserIt('the admin Inventory shows what septad says is free for each kind of sharing, by the tenants’ own rules — axe clean', async () => {
    const inventory = await portal.admin.ok('GET', '/v1/inventory/free-capacity');
    const kinds = inventory.by_sharing.map((f) => f.gpu_sharing);
    assert.deepEqual([...kinds].sort(), ['FRACTIONAL', 'MIG', 'WHOLE_GPU', 'WHOLE_NODE']);
    // One set of rules: a tenant of a tier of that kind reads the same.
    assert.deepEqual(inventory.by_sharing.find((f) => f.gpu_sharing === 'MIG'), await tenant.ok('GET', '/v1/tenants/e2e-iso/free-capacity'));
    await page.goto(url('/admin/inventory'));
    await page.locator('[data-loaded="inventory"]').waitFor();
    for (const free of inventory.by_sharing) assert.deepEqual(await freeTable(page, free.gpu_sharing), expectedFree(free), free.gpu_sharing);
    await expectAxeClean('inventory with free capacity by kind');
  });

  browserIt('beside GPU memory the shared form shows the most free on one GPU and the total, as septad reads them — axe clean', async () => {
    const free = await portal.admin.ok('GET', '/v1/tenants/e2e-frac/free-capacity');
    assert.equal(free.gpu_sharing, 'FRACTIONAL');
    assert.ok(free.shared?.length > 0, 'the default inventory has GPUs for shares');
    assert.deepEqual(await overviewFree('/t/e2e-frac', 'FRACTIONAL'), expectedFree(free));
    await page.goto(url('/t/e2e-frac/vclusters/new'));
    const hint = page.locator('[data-free="capacity.shared.gpu_memory_mib"]');
    await hint.waitFor();
    const largest = Math.max(...free.shared.map((s) => s.largest_gpu_memory_mib ?? 0));
    const total = free.shared.reduce((t, s) => t + Number(s.gpu_memory_mib ?? 0), 0);
    const gpus = free.shared.reduce((t, s) => t + (s.gpus ?? 0), 0);
    assert.ok(largest > 0 && total >= largest, `${largest} of ${total} MiB`);
    assert.equal(await hint.textContent(), `Free now: at most ${largest} MiB on one GPU, ${total} MiB on ${gpus} GPU${gpus === 1 ? '' : 's'} in all.`);
    const input = page.getByLabel('GPU memory (MiB)');
    assert.ok((await input.getAttribute('aria-describedby')).split(' ').includes(await hint.getAttribute('id')), 'announced with the input');
    await expectAxeClean('shared form with free GPU memory');
  });

  browserIt('the pages logged no console error, uncaught error or CSP violation', () => {
    assert.deepEqual(problems.filter((p) => !EXPECTED_HTTP.test(p)), []);
  });
});

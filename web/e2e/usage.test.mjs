// The usage pages against a septad that scrapes kubesim's dcgm-exporter test
// double every second (as tests/e2e/septad/septad_usage_e2e.sh does): two
// dedicated tenants each hold one A100; e2e-busy runs a pod the simulator
// keeps 50 % busy (run.ai/simulated-gpu-utilization), e2e-idle one that holds
// 20,000 MiB and computes nothing, idle past the dedicated threshold (30 s
// here). Every figure the pages show is compared with septad's REST answer
// for the same window, read in the test; the window is a whole minute that
// is over and accounted, so its figures no longer change.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, screenshot } from './lib/browser.mjs';
import { openPortal, portalMode, signIn as signInOn } from './lib/setup.mjs';
import { eventually, restClient, tenantWithToken } from './lib/rest.mjs';

// The sign-in page's session check is answered 401 while signed out.
const EXPECTED_HTTP = /Failed to load resource: the server responded with a status of 401 (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\/sessions\/current/;
const SEPTAD_ARGS = ['--usage-scrape-interval', '1s', '--usage-hoarding-after', 'dedicated=30s'];
const PRICE = 3.6;
const MINUTE = 60_000;

const mode = portalMode();
const browserIt = (name, fn) => it(name, { skip: mode.skipBrowser }, fn);

const utc = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The number a cell shows: "0.0167", "12,346", "USD 0.06", "50 %". */
const shown = (text) => Number(/-?[\d,]*\.?\d+/.exec(text)[0].replace(/,/g, ''));

/** The page's rounding: three significant digits below 1, then 2, 1 or 0 decimals. */
function assertHours(text, value, what) {
  const got = shown(text);
  const tolerance = Math.abs(value) < 1 ? Math.abs(value) * 0.005 + 1e-12 : 0.5;
  assert.ok(Math.abs(got - value) <= tolerance, `${what}: the page shows ${text}, septad says ${value}`);
}

/** A share the page rounds down to a tenth of a percent. */
function assertShare(text, ratio, what) {
  const got = shown(text) / 100;
  assert.ok(got <= ratio + 1e-6 && ratio - got < 0.001 + 1e-9, `${what}: the page shows ${text}, septad says ${ratio}`);
}

/** The figures of a report row (UsageTable) against a UsageItem of septad's. */
async function assertRow(row, item, what) {
  const cell = (col) => row.locator(`[data-col="${col}"]`).textContent();
  assertHours(await cell('allocated'), item.allocated_gpu_hours ?? 0, `${what} allocated`);
  assertHours(await cell('used'), item.used_gpu_hours ?? 0, `${what} used`);
  assertHours(await cell('waste'), item.waste_gpu_hours ?? 0, `${what} waste`);
  assertHours(await cell('unmeasured'), Math.max(0, (item.allocated_gpu_hours ?? 0) - (item.measured_gpu_hours ?? 0)), `${what} not measured`);
  if (item.efficiency === undefined) assert.equal(await cell('efficiency'), 'not measured');
  else assertShare(await cell('efficiency'), item.efficiency, `${what} efficiency`);
  const coverage = await cell('coverage');
  if ((item.coverage ?? 0) >= 1) assert.equal(coverage, 'measured all the time', what);
  else {
    assert.match(coverage, /^measured [\d.]+ % of the time$/, `${what}: coverage below 1 is said as time not measured`);
    assertShare(coverage, item.coverage ?? 0, `${what} coverage`);
  }
  const cost = await cell('cost');
  assert.match(cost, /^USD /, `${what}: the cost names its currency`);
  assert.ok(Math.abs(shown(cost) - (item.cost ?? 0)) <= 0.005 + 1e-9, `${what} cost: the page shows ${cost}, septad says ${item.cost}`);
}

/** Clicks a CSV button; the file's text. */
async function downloadCsv(page, button) {
  const download = page.waitForEvent('download');
  await button.click();
  const d = await download;
  return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
}

/** RFC 4180 as the page writes it (no quoted cells here: names are DNS labels): header → rows of objects. */
function parseCsv(text) {
  assert.ok(text.endsWith('\r\n'), 'the last line ends with CRLF');
  const lines = text.slice(0, -2).split('\r\n');
  assert.ok(lines.every((l) => !l.includes('\n') && !l.includes('"')), 'CRLF line ends, nothing to quote');
  const [header, ...rows] = lines.map((l) => l.split(','));
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}

function pod(name, utilization, memoryMib) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: { 'run.ai/simulated-gpu-utilization': utilization, 'simulation.septa.dev/gpu-memory-mib': memoryMib } },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'main',
          image: 'busybox',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { limits: { cpu: '500m', memory: '512Mi', 'nvidia.com/gpu': 1 } },
        },
      ],
    },
  });
}

describe('usage pages', () => {
  let suite, portal, page, problems;
  const t = {};
  /** The whole minute [minute, minute + 60 s) in which both pods ran from start to end. */
  let minute;
  const url = (path) => portal.base + path;
  const expectAxeClean = async (label) => assert.deepEqual(await axeViolations(page), [], `axe on ${label}`);
  const windowOf = (start, end, step) => `start=${encodeURIComponent(utc(start))}&end=${encodeURIComponent(utc(end))}&step=${step}`;
  const exactWindow = () => windowOf(minute, minute + MINUTE, '1m');

  async function signIn(token) {
    await page.context().clearCookies();
    await signInOn(page, portal.base, token);
  }

  /** A tenant with one dedicated A100 virtual cluster, READY, and a pod in it with that utilization and memory. */
  async function tenantRunning(name, vcluster, utilization, memoryMib) {
    const token = await tenantWithToken(portal.admin, name, 'dedicated');
    const rest = restClient(portal.base, token);
    await rest.ok('POST', `/v1/tenants/${name}/vclusters`, {
      name: vcluster,
      capacity: { gpus: { model: 'A100-80GB', count: 1 } },
      quota: { cpu_milli: 2000, memory_mib: 4096, pods: 5 },
    });
    await eventually(async () => (await rest.ok('GET', `/v1/tenants/${name}/vclusters/${vcluster}`)).state === 'READY', { what: `${name}/${vcluster} READY` });
    const kubeconfig = join(portal.septad.dataDir, `${name}.kubeconfig`);
    writeFileSync(kubeconfig, (await rest.ok('POST', `/v1/tenants/${name}/vclusters/${vcluster}:kubeconfig`, { role: 'admin' })).kubeconfig);
    const kubectl = (args, input) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], { encoding: 'utf8', input, timeout: 30_000 });
    kubectl(['create', '-f', '-'], pod('work', utilization, memoryMib));
    return { token, rest, kubectl, vcluster };
  }

  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(
      async (p) => {
        portal = p;
        await p.admin.ok('POST', '/v1/usage/prices', { model: 'A100-80GB', tier: 'dedicated', per_gpu_hour: PRICE });
        await p.admin.ok('POST', '/v1/tenants', { name: 'e2e-none', trust_tier: 'dedicated' });
        t.busy = await tenantRunning('e2e-busy', 'train', '50', '8000');
        t.idle = await tenantRunning('e2e-idle', 'idle', '0', '20000');
        for (const x of [t.busy, t.idle]) {
          await eventually(() => x.kubectl(['get', 'pod', 'work', '-o', 'jsonpath={.status.phase}']) === 'Running', { what: 'the pod Running' });
        }
      },
      { extraArgs: SEPTAD_ARGS },
    );
    ({ page, problems } = suite);
    // The first whole minute that begins after both pods run; then wait until
    // septad has accounted all of it: one GPU held the whole minute is 1/60
    // GPU-hour allocated, less while the minute is not yet accounted.
    minute = Math.ceil(Date.now() / MINUTE) * MINUTE;
    await eventually(
      async () => {
        const r = await t.busy.rest.ok('GET', `/v1/tenants/e2e-busy/usage?${exactWindow()}&group_by=vcluster`);
        return Math.abs((r.items?.[0]?.allocated_gpu_hours ?? 0) - 1 / 60) < 1e-9;
      },
      { timeoutMs: 180_000, what: `the minute ${utc(minute)} accounted` },
    );
  });

  after(async () => {
    await suite?.close();
  });

  browserIt('a tenant’s usage over an accounted minute: the table, its total and its CSV are septad’s figures, the chart one bar per minute — axe clean', async () => {
    const api = await t.busy.rest.ok('GET', `/v1/tenants/e2e-busy/usage?${exactWindow()}&group_by=vcluster`);
    const [item] = api.items;
    assert.equal(item.vcluster, 'train');
    assert.ok(Math.abs(item.efficiency - 0.5) < 1e-9 && item.coverage > 0.9 && Math.abs(item.cost - PRICE / 60) < 1e-9, JSON.stringify(item));

    await signIn(t.busy.token);
    await page.goto(url(`/t/e2e-busy/usage?${exactWindow()}`));
    await page.locator('[data-loaded="usage"]').waitFor();
    assert.match(await page.locator('[data-window-text]').textContent(), new RegExp(`^The link’s window: ${utc(minute).slice(0, 16).replace('T', ' ')} UTC to .* in steps of 1 minute \\(from septad’s minute records\\)`));
    assert.equal(await page.locator('[aria-current="true"][data-window]').count(), 0, 'no preset is current');
    await assertRow(page.locator('tr[data-report-row="train"]'), item, 'train');
    await assertRow(page.locator('tr[data-report-total]'), api.total, 'total');
    assert.equal(await page.locator('tr[data-report-row="train"] [data-col="efficiency"]').textContent(), '50 %');
    assert.equal(await page.locator('[data-usage-chart]').getAttribute('data-bars'), '1');
    const series = await t.busy.rest.ok('GET', `/v1/tenants/e2e-busy/usage?${exactWindow()}`);
    const bar = page.locator(`[data-chart-table] tr[data-bucket="${new Date(minute).toISOString()}"] td`);
    assertHours(await bar.nth(0).textContent(), series.items[0].allocated_gpu_hours, 'the chart’s allocated');
    assertHours(await bar.nth(1).textContent(), series.items[0].used_gpu_hours, 'the chart’s used');

    const csv = await downloadCsv(page, page.getByRole('button', { name: 'Download the table as CSV' }));
    assert.equal(csv.name, `usage-e2e-busy-${utc(minute).replace(':00Z', 'Z').replace(/:/g, '-')}-${utc(minute + MINUTE).replace(':00Z', 'Z').replace(/:/g, '-')}.csv`);
    const rows = parseCsv(csv.text);
    assert.equal(rows.length, 1);
    assert.deepEqual(
      { ...rows[0] },
      {
        start: item.start,
        end: item.end,
        tenant: 'e2e-busy', // septad names a virtual cluster with its tenant, and septactl's CSV has the column then too
        vcluster: 'train',
        allocated_gpu_hours: String(item.allocated_gpu_hours),
        used_gpu_hours: String(item.used_gpu_hours),
        waste_gpu_hours: String(item.waste_gpu_hours),
        efficiency: String(item.efficiency),
        coverage: String(item.coverage),
        cost: String(item.cost),
        currency: 'USD',
      },
      'the CSV carries septad’s figures at full precision',
    );
    await page.locator('[data-loaded="hoarders"] [data-hoarders-none]').waitFor();
    await expectAxeClean('a tenant’s usage');
  });

  browserIt('the window is in the URL: presets by link, the default a week, a window septad would refuse said and replaced', async () => {
    await page.goto(url('/t/e2e-busy/usage'));
    await page.locator('[data-loaded="usage"]').waitFor();
    assert.equal(await page.locator('[aria-current="true"][data-window]').getAttribute('data-window'), '7d');
    assert.equal(await page.locator('[data-usage-chart]').getAttribute('data-bars'), '28', 'a week by 6 hours');
    // What the busy tenant used so far shows in the week too (it grows: at least the accounted minute).
    assert.ok(shown(await page.locator('tr[data-report-row="train"] [data-col="allocated"]').textContent()) >= 1 / 60 - 1e-4);
    await page.getByRole('link', { name: 'Last 24 hours' }).click();
    await page.waitForURL((u) => u.search === '?window=24h');
    await page.locator('[data-usage-chart][data-bars="24"]').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Last 24 hours' }).getAttribute('aria-current'), 'true');
    await expectAxeClean('usage over the last 24 hours');
    // The exact-window link names the same window, readable by anyone it is sent to.
    const exact = new URL(await page.locator('[data-window-link]').getAttribute('href'), portal.base);
    assert.equal(exact.searchParams.get('step'), '1h');
    assert.equal(Date.parse(exact.searchParams.get('end')) - Date.parse(exact.searchParams.get('start')), 24 * 3600_000);

    await page.goto(url('/t/e2e-busy/usage?start=yesterday&end=today'));
    await page.locator('[data-loaded="usage"]').waitFor();
    assert.match(await page.locator('[data-window-invalid]').textContent(), /^The link’s window was not used: the start "yesterday" is not an RFC 3339 date-time\.$/);
    assert.equal(await page.locator('[aria-current="true"][data-window]').getAttribute('data-window'), '7d');
  });

  browserIt('idle GPUs: the idle tenant’s virtual cluster, idle past its tier’s threshold, holding memory, as septad lists it — axe clean', async () => {
    const listed = await eventually(async () => (await t.idle.rest.ok('GET', '/v1/usage/hoarders?tenant=e2e-idle')).hoarders?.[0], { what: 'e2e-idle a hoarder' });
    assert.deepEqual([listed.vcluster, listed.holding_memory, listed.threshold_seconds], ['idle', true, '30']);
    await signIn(t.idle.token);
    await page.goto(url(`/t/e2e-idle/usage?${exactWindow()}`));
    const row = page.locator('tr[data-hoarder="e2e-idle/idle"]');
    await row.waitFor();
    assert.equal(await row.locator('[data-col="threshold"]').textContent(), '30s (dedicated)');
    assert.equal(await row.locator('[data-col="memory"]').textContent(), 'Held: more than 1 GiB in use while idle');
    const idle = await row.locator('[data-col="idle"]').textContent();
    const seconds = [...idle.matchAll(/(\d+)([dhms])/g)].reduce((s, [, n, u]) => s + Number(n) * { d: 86400, h: 3600, m: 60, s: 1 }[u], 0);
    assert.ok(seconds >= 30 && seconds >= Number(listed.idle_seconds), `idle ${idle}: at least the threshold, and what septad said before`);
    // Its minute: held and billed, measured and not used — waste, not "not measured".
    const api = await t.idle.rest.ok('GET', `/v1/tenants/e2e-idle/usage?${exactWindow()}&group_by=vcluster`);
    await page.locator('[data-loaded="usage"]').waitFor();
    await assertRow(page.locator('tr[data-report-row="idle"]'), api.items[0], 'idle');
    assert.equal(api.items[0].used_gpu_hours ?? 0, 0);
    assert.equal(await page.locator('tr[data-report-row="idle"] [data-col="efficiency"]').textContent(), '0 %');
    await expectAxeClean('usage with an idle virtual cluster');
  });

  browserIt('a tenant with nothing recorded gets the empty state, not a chart of zeros — axe clean', async () => {
    await signIn(portal.septad.adminToken);
    await page.goto(url('/t/e2e-none/usage'));
    await page.locator('[data-loaded="usage"]').waitFor();
    await page.locator('[data-usage-empty]').waitFor();
    assert.equal(await page.locator('[data-usage-chart]').count(), 0);
    await page.locator('[data-loaded="hoarders"] [data-hoarders-none]').waitFor();
    await expectAxeClean('usage with nothing recorded');
  });

  browserIt('an admin’s platform usage: every tenant and the unreserved pool as septad reports them, CSV of both — axe clean', async () => {
    const api = await portal.admin.ok('GET', `/v1/usage?${exactWindow()}&group_by=tenant`);
    const tenants = Object.fromEntries(api.usage.items.map((i) => [i.tenant, i]));
    assert.deepEqual(Object.keys(tenants).sort(), ['e2e-busy', 'e2e-idle']);
    await page.goto(url('/admin/tenants'));
    await page.getByRole('link', { name: 'Platform usage' }).click();
    await page.waitForURL((u) => u.pathname === '/admin/usage');
    await page.goto(url(`/admin/usage?${exactWindow()}`));
    await page.locator('[data-loaded="platform-usage"]').waitFor();
    for (const [name, item] of Object.entries(tenants)) await assertRow(page.locator(`tr[data-report-row="${name}"]`), item, name);
    await assertRow(page.locator('tr[data-report-total]'), api.usage.total, 'the platform’s total');
    assert.equal(await page.locator('tr[data-report-row="e2e-busy"] a').getAttribute('href'), `/t/e2e-busy/usage?${exactWindow()}`);
    const [pool] = api.pool;
    const poolRow = page.locator('tr[data-pool-row="all"]');
    for (const [col, key] of [['capacity', 'capacity_gpu_hours'], ['reserved', 'reserved_gpu_hours'], ['unreserved', 'unreserved_gpu_hours'], ['used', 'used_gpu_hours']]) {
      assertHours(await poolRow.locator(`[data-col="${col}"]`).textContent(), pool[key] ?? 0, `pool ${col}`);
    }
    const allocated = api.usage.items.reduce((s, i) => s + i.allocated_gpu_hours, 0);
    assert.ok(Math.abs(allocated + pool.unreserved_gpu_hours - pool.capacity_gpu_hours) < 1e-9, 'tenants + pool = capacity');
    await page.locator('tr[data-hoarder="e2e-idle/idle"]').waitFor();
    assert.equal(await page.locator('tr[data-hoarder="e2e-busy/train"]').count(), 0);

    const byTenant = parseCsv((await downloadCsv(page, page.getByRole('button', { name: 'Download the tenants as CSV' }))).text);
    assert.deepEqual(
      byTenant.map((r) => [r.tenant, Number(r.allocated_gpu_hours), Number(r.used_gpu_hours), Number(r.cost)]),
      api.usage.items.map((i) => [i.tenant, i.allocated_gpu_hours, i.used_gpu_hours ?? 0, i.cost ?? 0]),
    );
    const poolCsv = parseCsv((await downloadCsv(page, page.getByRole('button', { name: 'Download the pool as CSV' }))).text);
    assert.deepEqual(poolCsv.map((r) => [r.model, Number(r.capacity_gpu_hours), Number(r.unreserved_gpu_hours)]), [['all', pool.capacity_gpu_hours, pool.unreserved_gpu_hours]]);
    await expectAxeClean('platform usage');
    await page.goto(url(`/admin/usage?${windowOf(minute - 4 * MINUTE, minute + 4 * MINUTE, '1m')}`));
    await page.locator('[data-loaded="platform-usage"] [data-usage-chart][data-bars="8"]').waitFor();
    await screenshot(page, 'admin-usage');
  });

  browserIt('screenshot: a tenant’s minutes around the accounted one', async () => {
    await signIn(t.busy.token);
    await page.goto(url(`/t/e2e-busy/usage?${windowOf(minute - 4 * MINUTE, minute + 4 * MINUTE, '1m')}`));
    await page.locator('[data-loaded="usage"]').waitFor();
    await page.locator('[data-loaded="usage-now"]').waitFor();
    assert.equal(await page.locator('[data-usage-chart]').getAttribute('data-bars'), '8');
    await screenshot(page, 'usage');
  });

  browserIt('the pages logged no console error, uncaught error or CSP violation', () => {
    assert.deepEqual(problems.filter((p) => !EXPECTED_HTTP.test(p)), []);
  });
});

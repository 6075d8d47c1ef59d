// The detail page's "Pods not running", against pods made with the real
// kubectl in a virtual cluster: one the syncer refuses shows with its reason
// and message as the page polls, one that runs does not; a virtual cluster
// whose Kubernetes API runs on the host says its pods are not read here.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { axeViolations } from './lib/browser.mjs';
import { openPortal, portalMode, signIn } from './lib/setup.mjs';
import { eventually, restClient, tenantWithToken } from './lib/rest.mjs';

// The sign-in page's session check is answered 401 while signed out, which
// Chromium logs as a console error; it is not a fault of the page.
const SIGNED_OUT = /Failed to load resource: the server responded with a status of 401 (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\/sessions\/current/;
// Likewise the 412 by which septad says it does not read a host control plane's pods.
const PODS_NOT_READ = /Failed to load resource: the server responded with a status of 412 (\([A-Za-z ]+\) )?\(http:\/\/[^/]+\/v1\/tenants\/[^/]+\/vclusters\/[^/]+\/pods\?/;
const HOST_CONTROL_PLANE = ['--control-plane', 'host', '--control-plane-database-address', 'postgres.septa-system.svc:5432', '--control-plane-database-sslmode', 'disable'];
const SHARE = { shared: { milli_gpu: 100, gpu_memory_mib: 1000 } };

const mode = portalMode();
const browserIt = (name, fn) => it(name, { skip: mode.skipBrowser }, fn);

function pod(name, spec) {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'busybox' }], ...spec } });
}

describe('pods not running, on a simulated control plane', () => {
  let suite, token;
  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(async ({ admin }) => {
      token = await tenantWithToken(admin, 'e2e-pods', 'shared', { quota: { gpu_milli: 1000, vclusters: 2 } });
    });
  });
  after(async () => suite?.close());

  browserIt('a pod the syncer refuses shows with SyncRefused and its message without a reload; a pod that runs does not', async () => {
    const { portal, page, problems } = suite;
    await restClient(portal.base, token).ok('POST', '/v1/tenants/e2e-pods/vclusters', { name: 'jobs', capacity: SHARE });
    await signIn(page, portal.base, token);
    await page.goto(`${portal.base}/t/e2e-pods/vclusters/jobs`);
    await page.getByTestId('vc-state').filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    const section = page.getByRole('region', { name: 'Pods not running' });
    await section.getByText('None.', { exact: true }).waitFor();
    // Set on this document only: a reload or a navigation would lose it.
    await page.evaluate(() => {
      window.septaSameDocument = true;
    });

    await page.getByLabel('Role').selectOption('edit');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download kubeconfig' }).click();
    const kubeconfig = await (await download).path();
    const kubectl = (args, input) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], { encoding: 'utf8', input, timeout: 30_000 });

    // The pod that runs first, Running before the refused one exists: every
    // list the page shows with the refused pod was read after it ran.
    kubectl(['create', '-f', '-'], pod('runs'));
    await eventually(() => kubectl(['get', 'pod', 'runs', '-o', 'jsonpath={.status.phase}']) === 'Running', { what: 'pod runs Running' });
    kubectl(['create', '-f', '-'], pod('host-network', { hostNetwork: true }));
    const message = 'spec.hostNetwork: host namespaces are not allowed at Pod Security level baseline';
    await eventually(() => kubectl(['get', 'pod', 'host-network', '-o', 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}']) === 'SyncRefused', {
      what: 'the syncer refusing pod host-network',
    });

    const refused = section.locator('tr[data-pod="default/host-network"]');
    // The page's own poll brings it (10 s while READY).
    await refused.waitFor({ timeout: 30_000 });
    const cells = await refused.locator('th, td').allTextContents();
    assert.deepEqual(cells.slice(0, 4), ['default/host-network', 'Pending', 'SyncRefused', message]);
    assert.match(cells[4], /^(created )?\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    assert.equal(await section.locator('tr[data-pod="default/runs"]').count(), 0, 'a running pod is not listed');
    assert.equal(await section.getByText('None.', { exact: true }).count(), 0);
    assert.equal(await section.getByText(/shown/).count(), 0, 'one pod: no "first 100 shown"');
    assert.equal(await page.evaluate(() => window.septaSameDocument), true, 'shown without a reload');

    assert.deepEqual(await axeViolations(page), [], 'axe on the detail page with a pod not running');
    assert.deepEqual(problems.filter((p) => !SIGNED_OUT.test(p)), [], 'no console error or CSP report');
  });
});

describe('pods not running, on a host control plane', () => {
  let suite, token;
  before(async () => {
    if (mode.skipBrowser) return;
    suite = await openPortal(
      async ({ admin }) => {
        token = await tenantWithToken(admin, 'e2e-host', 'shared', { quota: { gpu_milli: 1000, vclusters: 2 } });
      },
      { extraArgs: HOST_CONTROL_PLANE },
    );
  });
  after(async () => suite?.close());

  browserIt('the detail page says septad does not read its pods, in a sentence and not as an error', async () => {
    const { portal, page, problems } = suite;
    await restClient(portal.base, token).ok('POST', '/v1/tenants/e2e-host/vclusters', { name: 'apis', capacity: SHARE });
    await signIn(page, portal.base, token);
    await page.goto(`${portal.base}/t/e2e-host/vclusters/apis`);
    await page.getByTestId('vc-state').filter({ hasText: /^READY$/ }).waitFor({ timeout: 60_000 });
    const section = page.getByRole('region', { name: 'Pods not running' });
    await section.getByText('runs on the host cluster, where Septa does not read its pods').waitFor();
    assert.equal(await section.getByRole('alert').count(), 0, 'no error box');
    assert.equal(await section.locator('table').count(), 0);
    assert.deepEqual(await axeViolations(page), [], 'axe on the detail page of a host control plane');
    assert.deepEqual(problems.filter((p) => !SIGNED_OUT.test(p) && !PODS_NOT_READ.test(p)), [], 'no console error or CSP report');
  });
});

// People sign in to the portal with their identity provider ("Sign in with
// <name>": septad runs the authorization code flow with PKCE as the
// provider's confidential client) in Chromium, against a septad of its own
// and the identity tests' real OpenID provider (tests/e2e/oidc/idp/): the
// tenants a person may choose and act in, the Members page, an admin by
// group, a person of no tenant, sign-out through the provider's end
// session, every sign_in_error message, and the attacks a browser can make
// (a return_to of another origin, a replayed or forged callback, another
// browser's callback, the provider down, a cancelled login). Nothing here
// is skipped: a septad without the SSO routes fails every test that needs
// them, saying so.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { axeViolations, screenshot } from './lib/browser.mjs';
import { openPortal } from './lib/setup.mjs';
import { callbackByFetch, startIdp } from './lib/idp.mjs';

const PROVIDER = 'Test IdP';
const USERS = {
  // acme's owner by her group, beta's viewer as herself.
  alice: { id: 'alice', email: 'alice@acme.test', groups: ['platform'], password: 'wonderland' },
  // A member of no tenant.
  bob: { id: 'bob', email: 'bob@acme.test', groups: ['interns'], password: 'builder' },
  // An admin by the issuer's admin_groups.
  carol: { id: 'carol', email: 'carol@acme.test', groups: ['septa-admins'], password: 'admin' },
  // gamma's viewer, her only tenant.
  erin: { id: 'erin', email: 'erin@acme.test', groups: [], password: 'erin' },
};
const CODES = ['expired', 'denied', 'provider_unavailable', 'refused', 'browser_mismatch'];
// Chromium logs every HTTP error answer as a console error; these are the
// API's answers the tests provoke or expect (the signed-out probe of the
// session, the refused return_to, a member added twice), matched by their
// /v1/ URL, so that a page or asset of the portal that fails to load still
// fails; and the /favicon.ico Chromium asks of a page that links no icon
// (the provider's, septad's JSON refusal), which the portal's pages never
// do (portal.test.mjs checks their icon).
const EXPECTED_HTTP =
  /Failed to load resource: the server responded with a status of ((400|401|409) (\([A-Za-z ]+\) )?\(http:\/\/127\.0\.0\.1:\d+\/v1\/|404 \(Not Found\) \(http:\/\/127\.0\.0\.1:\d+\/favicon\.ico\))/;

describe('sign-in with an identity provider', () => {
  let idp, suite, portal, page, problems, secretDir;
  /** The callback URLs the browser was sent to (code and state of each sign-in). */
  const callbacks = [];

  const url = (path) => portal.base + path;
  const onPortal = (u, path) => u.origin === portal.base && u.pathname === path;
  const expectAxeClean = async (label) => assert.deepEqual(await axeViolations(page), [], `axe on ${label}`);
  /** What septad says of the browser's session cookie, whichever page (the provider's too) is open. */
  const sessionStatus = async () => (await page.context().request.get(url('/v1/sessions/current'))).status();
  const sessionCookies = async () => (await page.context().cookies(portal.base)).filter((c) => /septa_session$/.test(c.name));

  let providersAnswer;
  /** Fails the test unless septad serves the SSO routes (an older septad answers 404). */
  async function requireSso() {
    providersAnswer ??= await fetch(url('/v1/sessions/providers')).then(async (r) => ({ status: r.status, body: await r.text() }));
    if (providersAnswer.status === 404) {
      assert.fail('septad lacks SSO: GET /v1/sessions/providers answered 404 (build septad with the portal’s "Sign in with SSO" server side)');
    }
    assert.equal(providersAnswer.status, 200, `GET /v1/sessions/providers: ${providersAnswer.body}`);
    return JSON.parse(providersAnswer.body);
  }

  /** A page of the portal (not septad's API, where the sign-in's redirects go). */
  const portalPage = (u) => u.origin === portal.base && !u.pathname.startsWith('/v1/');

  /**
   * The first page of the portal (or, with `orProvider`, of the provider)
   * the browser is sent to while `action` runs, as the address it asked
   * for: the sign_in_error is still in it (the page cleans it once shown).
   */
  async function nextPage(action, { orProvider = false } = {}) {
    const landed = page.waitForRequest((r) => {
      if (!r.isNavigationRequest() || r.frame() !== page.mainFrame()) return false;
      const u = new URL(r.url());
      return portalPage(u) || (orProvider && u.origin === idp.issuer);
    });
    await action();
    return new URL((await landed).url());
  }

  /**
   * From a browser that holds no cookie (septad's nor the provider's: the
   * provider then asks for the login): the provider's button on the sign-in
   * page, its login form; the portal's page the browser is sent back to.
   */
  async function signInWithProvider(user) {
    await requireSso();
    await page.context().clearCookies();
    await page.goto(url('/sign-in'));
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await atProviderLogin();
    return nextPage(async () => {
      await page.locator('input[name=login]').fill(user.email);
      await page.locator('input[name=password]').fill(user.password);
      await page.locator('button[type=submit]').click();
    });
  }

  const atProviderLogin = () => page.waitForURL((u) => u.origin === idp.issuer && u.pathname.startsWith('/interaction/'));

  /**
   * Signs out with the header's button, through the provider's end session
   * (septad answers its URL: 200), back to the portal's sign-in page; the
   * address of the provider's page the browser was sent to.
   */
  async function signOutHere() {
    const ended = page.waitForResponse((r) => r.url() === url('/v1/sessions/current') && r.request().method() === 'DELETE');
    const endSession = page.waitForRequest((r) => r.isNavigationRequest() && r.url().startsWith(idp.issuer), { timeout: 20_000 }).catch(() => null);
    // The provider's page confirms by itself (a form it submits), then returns to the portal.
    const confirmed = page.waitForRequest((r) => r.url().startsWith(`${idp.issuer}/session/end/confirm`), { timeout: 20_000 }).catch(() => null);
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.equal((await ended).status(), 200, 'a person of a provider with an end session: its URL');
    const sent = await endSession;
    assert.ok(sent && (await confirmed), 'the browser went through the provider’s end session');
    await page.waitForURL((u) => onPortal(u, '/sign-in'));
    return new URL(sent.url());
  }

  /** A callback URL of alice's sign-in begun in another browser (callbackByFetch), not redeemed. */
  async function othersCallback() {
    const { providers } = await requireSso();
    const start = new URL(providers[0].sign_in_url, portal.base);
    start.searchParams.set('return_to', '/t/acme');
    return callbackByFetch(start.href, url('/v1/sessions/oidc/callback'), USERS.alice);
  }

  before(async () => {
    idp = await startIdp({
      clients: [
        {
          client_id: 'portal',
          client_secret: 'portal-secret',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          // septad listens on port 0: a native client's loopback redirect
          // URIs match on any port (RFC 8252 7.3, oidc-provider's
          // application_type "native"), with the path exact.
          application_type: 'native',
          redirect_uris: ['http://127.0.0.1/v1/sessions/oidc/callback'],
          post_logout_redirect_uris: ['http://127.0.0.1/'],
        },
      ],
      users: Object.values(USERS),
    });
    secretDir = mkdtempSync(join(tmpdir(), 'septa-web-sso-'));
    const secretFile = join(secretDir, 'portal-secret');
    writeFileSync(secretFile, 'portal-secret\n', { mode: 0o600 });
    const configFile = join(secretDir, 'septad.yaml');
    writeFileSync(
      configFile,
      `oidc_issuers:
  - issuer: ${idp.issuer}
    audience: septa
    client_id: portal
    client_secret_file: ${secretFile}
    name: ${PROVIDER}
    username_claim: email
    groups_claim: groups
    admin_groups: [septa-admins]
`,
    );
    try {
      suite = await openPortal(
        async ({ admin }) => {
          for (const t of ['acme', 'beta', 'gamma']) await admin.ok('POST', '/v1/tenants', { name: t, trust_tier: 'shared', quota: { gpu_milli: 4000, vclusters: 10 } });
          await admin.ok('POST', '/v1/tenants/acme/members', { member: 'group:platform', role: 'owner' });
          await admin.ok('POST', '/v1/tenants/beta/members', { member: 'user:alice@acme.test', role: 'viewer' });
          await admin.ok('POST', '/v1/tenants/gamma/members', { member: 'group:others', role: 'owner' });
          await admin.ok('POST', '/v1/tenants/gamma/members', { member: 'user:erin@acme.test', role: 'viewer' });
          await admin.ok('POST', '/v1/tenants/acme/vclusters', { name: 'acme-train', capacity: { shared: { milli_gpu: 100, gpu_memory_mib: 1000 } } });
          await admin.ok('POST', '/v1/tenants/beta/vclusters', { name: 'beta-infer', capacity: { shared: { milli_gpu: 100, gpu_memory_mib: 1000 } } });
        },
        { extraArgs: ['--config', configFile] },
      );
    } catch (err) {
      await idp.stop();
      throw new Error(`septad with an SSO issuer (client_id, client_secret_file, name) did not start: a septad without the portal's SSO server side refuses that config. ${err.message}`);
    }
    ({ portal, page, problems } = suite);
    page.on('request', (r) => {
      if (r.url().startsWith(url('/v1/sessions/oidc/callback?'))) callbacks.push(r.url());
    });
  });

  after(async () => {
    await suite?.close();
    await idp?.stop();
    if (secretDir) rmSync(secretDir, { recursive: true, force: true });
  });

  it('septad lists the provider that signs people in, with the path that starts its sign-in', async () => {
    const { providers } = await requireSso();
    assert.equal(providers.length, 1, JSON.stringify(providers));
    const [p] = providers;
    assert.equal(p.issuer, idp.issuer);
    assert.equal(p.name, PROVIDER);
    const start = new URL(p.sign_in_url, portal.base);
    assert.equal(start.origin, portal.base, 'a path of septad');
    assert.equal(start.pathname, '/v1/sessions/oidc/start');
    assert.equal(start.searchParams.get('issuer'), idp.issuer);
  });

  it('a person signs in with the provider, lands on the page she started from, and acts in exactly her tenants', async () => {
    // Signed out, a tenant's page leads to sign-in, which offers the provider.
    await page.goto(url('/t/beta/vclusters'));
    await page.waitForURL((u) => onPortal(u, '/sign-in'));
    const link = page.getByRole('link', { name: `Sign in with ${PROVIDER}` });
    await link.waitFor();
    const href = new URL(await link.getAttribute('href'), portal.base);
    assert.equal(href.pathname, '/v1/sessions/oidc/start');
    assert.equal(href.searchParams.get('return_to'), '/t/beta/vclusters');
    await expectAxeClean('sign-in with a provider');
    await screenshot(page, 'sign-in-sso');

    await link.click();
    await atProviderLogin();
    await page.locator('input[name=login]').fill(USERS.alice.email);
    await page.locator('input[name=password]').fill(USERS.alice.password);
    await page.locator('button[type=submit]').click();
    await page.waitForURL((u) => onPortal(u, '/t/beta/vclusters'));
    await page.getByRole('heading', { name: 'Virtual clusters of beta' }).waitFor();
    await page.locator('tr[data-vcluster="beta-infer"]').waitFor();
    assert.equal(callbacks.length, 1, 'one callback');

    const session = await page.evaluate(async () => (await fetch('/v1/sessions/current')).json());
    assert.equal(session.kind, 'person');
    assert.equal(session.person.user, 'alice@acme.test');
    assert.equal(session.person.issuer, idp.issuer);
    assert.equal(session.principal, '', 'two tenants: none without naming one');
    const [cookie] = await sessionCookies();
    assert.ok(cookie, 'the session cookie');
    assert.equal(cookie.httpOnly, true);

    // The header names her; the switcher offers exactly her tenants (not gamma).
    await page.locator('header').getByText('alice@acme.test (viewer)').waitFor();
    const picker = page.getByLabel('Tenant', { exact: true });
    assert.deepEqual((await picker.locator('option').evaluateAll((os) => os.map((o) => o.value))).filter(Boolean), ['acme', 'beta']);
    assert.equal(await picker.inputValue(), 'beta');
    // A viewer in beta: nothing to create.
    assert.equal(await page.getByRole('link', { name: 'New virtual cluster' }).count(), 0);

    // Switching keeps the section: acme's virtual clusters, as its owner.
    await picker.selectOption('acme');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL((u) => onPortal(u, '/t/acme/vclusters'));
    await page.getByRole('heading', { name: 'Virtual clusters of acme' }).waitFor();
    await page.locator('tr[data-vcluster="acme-train"]').waitFor();
    assert.equal(await page.locator('tr[data-vcluster="beta-infer"]').count(), 0);
    await page.getByRole('link', { name: 'New virtual cluster' }).waitFor();
    await page.locator('header').getByText('alice@acme.test (owner)').waitFor();
    await expectAxeClean('virtual clusters as a person');

    // The choice holds for the tab: a page that names no tenant acts in acme
    // (Septa-Tenant), "/" leads to acme.
    const tokensRead = page.waitForRequest((r) => r.url() === url('/v1/tokens') && r.method() === 'GET');
    await page.goto(url('/tokens'));
    assert.equal((await tokensRead).headers()['septa-tenant'], 'acme');
    await page.getByRole('form', { name: 'New token' }).waitFor();
    const tenantRead = page.waitForRequest((r) => r.url() === url('/v1/tenants/acme'));
    await page.goto(url('/'));
    await page.waitForURL((u) => onPortal(u, '/t/acme'));
    assert.equal((await tenantRead).headers()['septa-tenant'], undefined, 'a path that names the tenant carries no selector');
    await page.locator('[data-loaded="overview"]').waitFor();
  });

  it('an owner adds, changes and removes a member on the Members page, errors beside the field; a viewer only reads', async () => {
    await requireSso();
    await page.goto(url('/t/acme'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.waitForURL((u) => onPortal(u, '/t/acme/members'));
    await page.locator('[data-loaded="members"]').waitFor();
    await page.locator('tr[data-member="group:platform"]').getByText('(gives you your role)').waitFor();

    const add = page.getByRole('form', { name: 'Add a member' });
    // Checked before sending: nothing typed.
    await add.getByRole('button', { name: 'Add member' }).click();
    await page.locator('[data-field-error="member"]').filter({ hasText: 'Enter the name' }).waitFor();

    await add.getByLabel('Kind').selectOption('user');
    await add.getByLabel('User name (required)').fill('dave@acme.test');
    await add.getByLabel('Role').selectOption('editor');
    await add.getByRole('button', { name: 'Add member' }).click();
    const dave = page.locator('tr[data-member="user:dave@acme.test"]');
    await dave.locator('[data-role]').filter({ hasText: /^editor$/ }).waitFor();
    const roleOf = async (member) => (await portal.admin.ok('GET', '/v1/tenants/acme/members')).members.find((m) => m.member === member)?.role;
    assert.equal(await roleOf('user:dave@acme.test'), 'editor');
    await expectAxeClean('members, as an owner');
    await screenshot(page, 'members');

    // septad's refusal (409: the tenant has the member) beside the field it names.
    await add.getByLabel('User name (required)').fill('dave@acme.test');
    await add.getByRole('button', { name: 'Add member' }).click();
    const err = page.locator('[data-field-error="member"]');
    await err.waitFor();
    assert.match(await err.textContent(), /already|exists/i);
    assert.equal(await add.getByLabel('User name (required)').getAttribute('aria-invalid'), 'true');
    await expectAxeClean('members form with a field error');

    // Change the role, then remove (typed confirmation).
    await dave.getByRole('combobox', { name: 'Role', exact: true }).selectOption('viewer');
    await dave.getByRole('button', { name: 'Save role of user:dave@acme.test' }).click();
    await dave.locator('[data-role]').filter({ hasText: /^viewer$/ }).waitFor();
    assert.equal(await roleOf('user:dave@acme.test'), 'viewer');
    await dave.getByRole('button', { name: 'Remove… user:dave@acme.test' }).click();
    await dave.getByLabel('Type the name, user:dave@acme.test, to confirm').fill('user:dave@acme.test');
    await dave.getByRole('button', { name: 'Delete member user:dave@acme.test' }).click();
    await dave.waitFor({ state: 'detached' });
    assert.equal(await roleOf('user:dave@acme.test'), undefined);

    // In beta she is a viewer: the list, no control.
    await page.goto(url('/t/beta/members'));
    await page.locator('tr[data-member="user:alice@acme.test"]').waitFor();
    await page.getByText('Only the tenant’s owners add, change or remove members.').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Add a member' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /Save role|Remove/ }).count(), 0);
    await expectAxeClean('members, as a viewer');
  });

  it('signing out goes through the provider’s end session and back to the portal, signed out for good', async () => {
    await requireSso();
    await page.goto(url('/t/acme'));
    await page.locator('[data-loaded="overview"]').waitFor();
    await idp.resetRequests();
    const endSession = await signOutHere();
    assert.equal(endSession.pathname, '/session/end', 'the provider’s end_session_endpoint');
    const seen = await idp.requests();
    assert.ok(seen['/session/end'] >= 1 && seen['/session/end/confirm'] >= 1, `the provider ended its session: ${JSON.stringify(seen)}`);
    assert.equal(await sessionStatus(), 401);
    assert.deepEqual(await sessionCookies(), []);
    await page.reload();
    await page.waitForURL((u) => onPortal(u, '/sign-in'));
    assert.equal(await sessionStatus(), 401, 'a reload stays signed out');
    // The provider's session is gone too: it asks for the login again.
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await atProviderLogin();
    await page.locator('input[name=login]').waitFor();
  });

  it('a replayed callback (the same code and state) signs no one in: expired', async () => {
    await requireSso();
    assert.equal(callbacks.length >= 1, true, 'the first sign-in’s callback was seen');
    assert.equal(await sessionStatus(), 401);
    const landed = await nextPage(() => page.goto(callbacks[0]));
    assert.equal(landed.pathname, '/sign-in');
    assert.equal(landed.searchParams.get('sign_in_error'), 'expired');
    await page.getByRole('alert').filter({ hasText: 'already used' }).waitFor();
    assert.equal(await sessionStatus(), 401, 'no session');
    assert.deepEqual(await sessionCookies(), []);
  });

  it('a callback with a forged state signs no one in', async () => {
    await page.context().clearCookies();
    const forged = await othersCallback();
    assert.ok(forged.searchParams.get('code'), `a code: ${forged}`);
    forged.searchParams.set('state', `forged-${forged.searchParams.get('state')}`);
    const landed = await nextPage(() => page.goto(forged.href));
    assert.equal(landed.pathname, '/sign-in', `not signed in: ${landed}`);
    assert.ok(CODES.includes(landed.searchParams.get('sign_in_error')), `an error code: ${landed}`);
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    assert.equal(await sessionStatus(), 401, 'no session');
    assert.deepEqual(await sessionCookies(), []);
  });

  it('a callback of a sign-in begun in another browser signs this one in as no one: browser_mismatch', async () => {
    // Login CSRF: an attacker's own code and state, opened in the victim's browser.
    await page.context().clearCookies();
    const landed = await nextPage(async () => page.goto((await othersCallback()).href));
    assert.equal(landed.pathname, '/sign-in', `not signed in: ${landed}`);
    assert.equal(landed.searchParams.get('sign_in_error'), 'browser_mismatch');
    await page.getByRole('alert').filter({ hasText: 'another browser' }).waitFor();
    assert.equal(await sessionStatus(), 401, 'no session');
    assert.deepEqual(await sessionCookies(), []);
  });

  it('return_to of another origin is refused at the start (400), and the browser goes nowhere', async () => {
    const { providers } = await requireSso();
    await idp.resetRequests();
    const elsewhere = [];
    const watch = (r) => {
      if (!r.url().startsWith(portal.base)) elsewhere.push(r.url());
    };
    page.on('request', watch);
    try {
      for (const bad of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)']) {
        const start = new URL(providers[0].sign_in_url, portal.base);
        start.searchParams.set('return_to', bad);
        const res = await page.goto(start.href);
        assert.equal(res.status(), 400, `return_to ${bad}`);
        assert.equal(new URL(page.url()).origin, portal.base, `return_to ${bad}: no redirect`);
      }
    } finally {
      page.off('request', watch);
    }
    assert.deepEqual(elsewhere, [], 'no request left septad');
    assert.equal((await idp.requests())['/auth'] ?? 0, 0, 'no sign-in began at the provider');
  });

  it('the provider down when a sign-in starts: provider_unavailable, no session', async () => {
    await requireSso();
    await page.context().clearCookies();
    await page.goto(url('/sign-in'));
    const link = page.getByRole('link', { name: `Sign in with ${PROVIDER}` });
    await link.waitFor();
    await idp.down('503');
    try {
      const landed = await nextPage(() => link.click(), { orProvider: true });
      assert.equal(landed.origin, portal.base, `septad sent the browser to a provider that is down instead of answering provider_unavailable: ${landed}`);
      assert.equal(landed.pathname, '/sign-in');
      assert.equal(landed.searchParams.get('sign_in_error'), 'provider_unavailable');
    } finally {
      await idp.up();
    }
    await page.getByRole('alert').filter({ hasText: 'cannot be reached' }).waitFor();
    assert.equal(await sessionStatus(), 401);
    assert.deepEqual(await sessionCookies(), []);
  });

  it('cancelling at the provider: denied, said on the sign-in page', async () => {
    await requireSso();
    await page.context().clearCookies();
    await page.goto(url('/sign-in'));
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    await atProviderLogin();
    const landed = await nextPage(() => page.getByRole('link', { name: 'Cancel' }).click());
    assert.equal(landed.pathname, '/sign-in');
    assert.equal(landed.searchParams.get('sign_in_error'), 'denied');
    await page.getByRole('alert').filter({ hasText: 'cancelled' }).waitFor();
    assert.equal(await sessionStatus(), 401);
  });

  it('every sign_in_error code is said as what to do, once: the address is cleaned', async () => {
    const says = {
      expired: 'took too long, or its link was already used',
      denied: 'refused the sign-in, or it was cancelled',
      provider_unavailable: 'cannot be reached. Try again later, or sign in with an API token',
      refused: 'log says why',
      browser_mismatch: 'begun in another browser',
    };
    for (const code of CODES) {
      await page.goto(url(`/sign-in?next=%2Ft%2Facme&sign_in_error=${code}`));
      await page.getByRole('alert').filter({ hasText: says[code] }).waitFor();
      await page.waitForURL((u) => onPortal(u, '/sign-in') && u.search === '?next=%2Ft%2Facme');
    }
    await page.goto(url('/sign-in?sign_in_error=no_such_code'));
    await page.getByRole('alert').filter({ hasText: 'did not complete' }).waitFor();
    await expectAxeClean('sign-in with an error');
    await screenshot(page, 'sign-in-sso-error');
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Septa' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0, 'not said again after a reload');
  });

  it('a person of one tenant acts in it; of no tenant is told whom to ask; an admin by group gets the admin pages', async () => {
    assert.equal((await signInWithProvider(USERS.erin)).pathname, '/');
    await page.waitForURL((u) => onPortal(u, '/t/gamma'));
    await page.getByRole('heading', { name: 'Overview of gamma' }).waitFor();
    await page.locator('header').getByText('erin@acme.test (viewer)').waitFor();
    assert.equal(await page.getByLabel('Tenant', { exact: true }).inputValue(), 'gamma');
    await signOutHere();

    assert.equal((await signInWithProvider(USERS.bob)).pathname, '/');
    await page.getByRole('heading', { name: 'You are a member of no tenant' }).waitFor();
    await page.getByText('user:bob@acme.test').waitFor();
    await page.getByText('group:interns').waitFor();
    assert.equal(await page.getByLabel('Tenant', { exact: true }).count(), 0, 'no switcher');
    await expectAxeClean('no tenant');
    await screenshot(page, 'no-tenant');
    // Every page says so: there is nothing to show.
    await page.goto(url('/t/acme/vclusters'));
    await page.getByRole('heading', { name: 'You are a member of no tenant' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Virtual clusters of acme' }).count(), 0);
    await signOutHere();

    assert.equal((await signInWithProvider(USERS.carol)).pathname, '/');
    await page.waitForURL((u) => onPortal(u, '/admin/tenants'));
    await page.locator('tr[data-tenant="gamma"]').waitFor();
    await page.locator('header').getByText('carol@acme.test (admin)').waitFor();
    await page.getByRole('link', { name: 'GPU inventory' }).waitFor();
    await page.goto(url('/t/gamma/members'));
    await page.locator('tr[data-member="group:others"]').waitFor();
    await page.getByRole('form', { name: 'Add a member' }).waitFor();
    await signOutHere();
  });

  it('the pages logged no console error, uncaught error or CSP violation', () => {
    assert.deepEqual(problems.filter((p) => !EXPECTED_HTTP.test(p)), []);
  });
});

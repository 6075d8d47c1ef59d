// The test OpenID provider (idp.mjs) proven through the real protocol with
// plain fetch: discovery, client_credentials JWT access tokens in the three
// algorithms, authorization code + PKCE through the login page, refresh,
// device flow, revocation, logout, and the /_test/ endpoints.
// Run: bash ensure.sh && node --test selftest.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Browser, form, parseForm, pkce, signIn as signInAt } from './browser.mjs';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';

const here = new URL('.', import.meta.url).pathname;
const REDIRECT = 'http://127.0.0.1:9/portal/callback';
const POST_LOGOUT = 'http://127.0.0.1:9/portal/signed-out';
const CI_CLAIMS = { repository: 'acme/platform', ref: 'refs/heads/main', environment: 'prod', repository_owner: 'acme' };

const config = {
  access_token_ttl: 120,
  audiences: ['septa', 'other'],
  clients: [
    ...['RS256', 'ES256', 'EdDSA'].map((alg) => ({
      client_id: `ci-${alg.toLowerCase()}`,
      client_secret: `secret-${alg}`,
      grant_types: ['client_credentials'],
      alg,
      ci_claims: CI_CLAIMS,
    })),
    {
      client_id: 'portal',
      client_secret: 'portal-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [POST_LOGOUT],
      id_token_signed_response_alg: 'ES256',
    },
    {
      client_id: 'septactl',
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code', 'refresh_token'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ],
  users: [
    { id: 'alice', email: 'alice@acme.test', name: 'Alice', groups: ['platform', 'gpu-users'], password: 'wonderland' },
    { id: 'bob', email: 'bob@acme.test', name: 'Bob', groups: ['viewers'] },
  ],
};

let idp; // { issuer, child, stderr }
let disco;
let tmp;

// Starts idp.mjs and waits for its ready line.
async function startIdp(cfg) {
  tmp = mkdtempSync(join(tmpdir(), 'septa-idp-'));
  const file = join(tmp, 'config.json');
  writeFileSync(file, JSON.stringify(cfg));
  const child = spawn(process.execPath, [join(here, 'idp.mjs'), '--config', file, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const lines = createInterface({ input: child.stdout });
  const ready = await Promise.race([
    new Promise((resolve) => lines.once('line', resolve)),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`idp exited ${code}: ${stderr}`)))),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`idp not ready in 10 s: ${stderr}`)), 10000).unref()),
  ]);
  const line = JSON.parse(ready);
  assert.match(line.issuer, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(line.pid, child.pid);
  lines.on('line', (l) => assert.fail(`idp printed a second stdout line: ${l}`));
  return { issuer: line.issuer, child, get stderr() { return stderr; } };
}

const basic = (id, secret) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function control(path, body) {
  const res = await fetch(`${idp.issuer}/_test/${path}`, body === undefined ? {} : {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `/_test/${path}: ${res.status}`);
  return res.json();
}

async function token(fields, auth) {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth) headers.authorization = basic(...auth);
  const res = await fetch(disco.token_endpoint, { method: 'POST', headers, body: form(fields) });
  return { status: res.status, body: await res.json() };
}

async function jwks() {
  const res = await fetch(disco.jwks_uri);
  assert.equal(res.status, 200);
  return res.json();
}

// Signs in through the login page (asserting its form); returns the redirect to the client.
async function signIn(browser, url, who) {
  const { page, redirect } = await signInAt(browser, url, who);
  assert.match(page.html, /<input type="text" name="login"/);
  assert.match(page.html, /<input type="password" name="password"/);
  assert.match(page.html, /<button type="submit">/);
  return redirect;
}

const newBrowser = () => new Browser([REDIRECT, POST_LOGOUT, 'http://127.0.0.1/callback']);

function authorizeUrl(params) {
  const url = new URL(disco.authorization_endpoint);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

before(async () => {
  idp = await startIdp(config);
  const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
  assert.equal(res.status, 200);
  disco = await res.json();
});

after(() => {
  idp?.child.kill('SIGTERM');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a bad config file: exit 2 and a message', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'septa-idp-bad-'));
  try {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ clients: [{ client_id: 'x', grant_types: ['client_credentials'], alg: 'HS256' }] }));
    const child = spawn(process.execPath, [join(here, 'idp.mjs'), '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 2);
    assert.equal(out, '');
    assert.match(err, /config error: clients\[0\]\.alg must be one of RS256, ES256, EdDSA/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('discovery document', () => {
  assert.equal(disco.issuer, idp.issuer);
  assert.equal(disco.jwks_uri, `${idp.issuer}/jwks`);
  assert.equal(disco.token_endpoint, `${idp.issuer}/token`);
  assert.equal(disco.authorization_endpoint, `${idp.issuer}/auth`);
  assert.equal(disco.device_authorization_endpoint, `${idp.issuer}/device/auth`);
  assert.ok(disco.revocation_endpoint && disco.end_session_endpoint && disco.userinfo_endpoint);
  assert.deepEqual(disco.response_types_supported, ['code']);
  assert.deepEqual(disco.code_challenge_methods_supported, ['S256']);
  for (const scope of ['openid', 'offline_access', 'email', 'profile', 'groups']) assert.ok(disco.scopes_supported.includes(scope), scope);
  for (const alg of ['RS256', 'ES256', 'EdDSA']) assert.ok(disco.id_token_signing_alg_values_supported.includes(alg), alg);
});

test('client_credentials: a JWT access token per algorithm, verifiable from the JWKS', async () => {
  const set = await jwks();
  assert.equal(set.keys.length, 3);
  for (const key of set.keys) assert.equal(key.d, undefined, 'private parts published');
  const remote = createRemoteJWKSet(new URL(disco.jwks_uri));
  for (const alg of ['RS256', 'ES256', 'EdDSA']) {
    const { status, body } = await token({ grant_type: 'client_credentials', resource: 'urn:septa' },
      [`ci-${alg.toLowerCase()}`, `secret-${alg}`]);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 120);
    const header = decodeProtectedHeader(body.access_token);
    assert.equal(header.alg, alg);
    assert.equal(header.typ, 'at+jwt');
    const key = set.keys.find((k) => k.kid === header.kid);
    assert.ok(key, `kid ${header.kid} not in the JWKS`);
    assert.equal(key.alg, alg);
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.aud, 'septa');
    assert.equal(claims.iss, idp.issuer);
    assert.equal(claims.client_id, `ci-${alg.toLowerCase()}`);
    assert.equal(claims.sub, 'repo:acme/platform:ref:refs/heads/main');
    for (const [k, v] of Object.entries(CI_CLAIMS)) assert.equal(claims[k], v, k);
    assert.equal(claims.exp - claims.iat, 120);
    assert.ok(claims.jti);
    const { payload } = await jwtVerify(body.access_token, remote, {
      issuer: idp.issuer, audience: 'septa', algorithms: [alg], typ: 'at+jwt',
    });
    assert.equal(payload.repository, 'acme/platform');
  }
  // Another audience; none named: the first one (septa); an unknown one: refused.
  const other = await token({ grant_type: 'client_credentials', resource: 'urn:other' }, ['ci-rs256', 'secret-RS256']);
  assert.equal(other.status, 200);
  assert.equal(decodeJwt(other.body.access_token).aud, 'other');
  const dflt = await token({ grant_type: 'client_credentials' }, ['ci-es256', 'secret-ES256']);
  assert.equal(dflt.status, 200);
  assert.equal(decodeJwt(dflt.body.access_token).aud, 'septa');
  const unknown = await token({ grant_type: 'client_credentials', resource: 'urn:nobody' }, ['ci-rs256', 'secret-RS256']);
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'invalid_target');
  const bare = await token({ grant_type: 'client_credentials', resource: 'septa' }, ['ci-rs256', 'secret-RS256']);
  assert.equal(bare.body.error, 'invalid_target', 'RFC 8707: a resource indicator is an absolute URI');
  const badSecret = await token({ grant_type: 'client_credentials', resource: 'urn:septa' }, ['ci-rs256', 'wrong']);
  assert.equal(badSecret.status, 401);
  assert.equal(badSecret.body.error, 'invalid_client');
});

let portalTokens; // from the code flow, for the refresh test

test('authorization code + PKCE through the login page', async () => {
  const browser = newBrowser();
  const { verifier, challenge } = pkce();
  const url = authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, state: 'st4te', nonce: 'n0nce',
    scope: 'openid email profile groups offline_access', prompt: 'consent',
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  // A wrong password shows the form again with an error.
  const page = await browser.go(url);
  assert.equal(page.status, 200);
  const wrong = await browser.go(page.url, { method: 'POST', body: { login: 'alice', password: 'nope' } });
  assert.equal(wrong.status, 200);
  assert.match(wrong.html, /class="error"/);
  assert.match(wrong.html, /name="login" value="alice"/);
  // The right one (by email) goes on: consent is automatic, the code comes back.
  const done = await browser.go(page.url, { method: 'POST', body: { login: 'alice@acme.test', password: 'wonderland' } });
  const back = done.redirect;
  assert.ok(back, `no redirect: ${done.html}`);
  assert.equal(back.searchParams.get('state'), 'st4te');
  assert.equal(back.searchParams.get('iss'), idp.issuer);
  const code = back.searchParams.get('code');
  assert.ok(code);

  const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
  const { status, body } = await token(exchange, ['portal', 'portal-secret']);
  assert.equal(status, 200, JSON.stringify(body));
  assert.ok(body.access_token && body.refresh_token && body.id_token);
  assert.equal(body.scope, 'openid email profile groups offline_access');
  assert.equal(decodeProtectedHeader(body.id_token).alg, 'ES256');
  const { payload: id } = await jwtVerify(body.id_token, createLocalJWKSet(await jwks()), { issuer: idp.issuer, audience: 'portal' });
  assert.equal(id.sub, 'alice');
  assert.equal(id.nonce, 'n0nce');
  assert.equal(id.email, 'alice@acme.test');
  assert.equal(id.email_verified, true);
  assert.equal(id.name, 'Alice');
  assert.deepEqual(id.groups, ['platform', 'gpu-users']);
  portalTokens = body;

  // The access token (no resource asked for) is for userinfo.
  const me = await fetch(disco.userinfo_endpoint, { headers: { authorization: `Bearer ${body.access_token}` } });
  assert.equal(me.status, 200);
  assert.deepEqual((await me.json()).groups, ['platform', 'gpu-users']);

  // Signed in already: the next authorization needs no login; a wrong
  // verifier is refused. resource=urn:septa gives a JWT access token for septa.
  const second = pkce();
  const again = await browser.go(authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid email groups', resource: 'urn:septa',
    code_challenge: second.challenge, code_challenge_method: 'S256',
  }));
  assert.ok(again.redirect, `no redirect: ${again.html}`);
  const code2 = again.redirect.searchParams.get('code');
  const wrongVerifier = await token({ grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, code_verifier: pkce().verifier }, ['portal', 'portal-secret']);
  assert.equal(wrongVerifier.status, 400);
  assert.equal(wrongVerifier.body.error, 'invalid_grant');

  const third = pkce();
  const withResource = await browser.go(authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid email groups', resource: 'urn:septa',
    code_challenge: third.challenge, code_challenge_method: 'S256',
  }));
  const ok = await token({ grant_type: 'authorization_code', code: withResource.redirect.searchParams.get('code'), redirect_uri: REDIRECT, code_verifier: third.verifier }, ['portal', 'portal-secret']);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const at = decodeJwt(ok.body.access_token);
  assert.equal(at.aud, 'septa');
  assert.equal(at.sub, 'alice');
  assert.equal(at.client_id, 'portal');
  assert.equal(at.email, 'alice@acme.test');
  assert.deepEqual(at.groups, ['platform', 'gpu-users']);
  assert.equal(decodeProtectedHeader(ok.body.access_token).typ, 'at+jwt');
  assert.equal(ok.body.refresh_token, undefined, 'no offline_access, no refresh token');

  // A public client must use PKCE.
  const noPkce = await browser.go(authorizeUrl({
    client_id: 'septactl', response_type: 'code', redirect_uri: 'http://127.0.0.1/callback', scope: 'openid',
  }));
  assert.equal(noPkce.redirect.searchParams.get('error'), 'invalid_request');
  assert.match(noPkce.redirect.searchParams.get('error_description'), /PKCE/);

  // RP-initiated logout: the confirmation form posted, back to the client.
  const logoutPage = await browser.go(`${disco.end_session_endpoint}?${form({ id_token_hint: body.id_token, post_logout_redirect_uri: POST_LOGOUT, state: 'bye' })}`);
  assert.equal(logoutPage.status, 200);
  const logoutForm = parseForm(logoutPage.html, logoutPage.url, 'op.logoutForm');
  const loggedOut = await browser.go(logoutForm.action, { method: 'POST', body: { ...logoutForm.fields, logout: 'yes' } });
  assert.equal(loggedOut.redirect?.href, `${POST_LOGOUT}?state=bye`);
  // Signed out: the login page again.
  const relogin = await browser.go(authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: third.challenge, code_challenge_method: 'S256',
  }));
  assert.equal(relogin.status, 200);
  assert.match(relogin.html, /name="password"/);
});

test('a replayed code is refused and revokes what it gave', async () => {
  const browser = newBrowser();
  const { verifier, challenge } = pkce();
  const back = await signIn(browser, authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid groups offline_access', prompt: 'consent',
    code_challenge: challenge, code_challenge_method: 'S256',
  }), { login: 'bob', password: 'any password will do' });
  const exchange = { grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: REDIRECT, code_verifier: verifier };
  const first = await token(exchange, ['portal', 'portal-secret']);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual(decodeJwt(first.body.id_token).groups, ['viewers']);
  const replay = await token(exchange, ['portal', 'portal-secret']);
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  // RFC 6749 4.1.2: the tokens issued for that code are revoked with it.
  const refresh = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, ['portal', 'portal-secret']);
  assert.equal(refresh.body.error, 'invalid_grant');
});

test('the login page\'s cancel link: access_denied back to the client', async () => {
  const browser = newBrowser();
  const page = await browser.go(authorizeUrl({
    client_id: 'portal', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 'c', code_challenge: pkce().challenge, code_challenge_method: 'S256',
  }));
  assert.equal(page.status, 200);
  const back = await browser.go(`${page.url}/abort`);
  assert.equal(back.redirect?.searchParams.get('error'), 'access_denied');
  assert.equal(back.redirect.searchParams.get('state'), 'c');
});

test('refresh token: new groups show, revocation ends it', async () => {
  assert.ok(portalTokens, 'the code flow test ran first');
  const changed = await control('users/alice/groups', { groups: ['platform', 'admins'] });
  assert.deepEqual(changed.groups, ['platform', 'admins']);
  const { status, body } = await token({ grant_type: 'refresh_token', refresh_token: portalTokens.refresh_token }, ['portal', 'portal-secret']);
  assert.equal(status, 200, JSON.stringify(body));
  const id = decodeJwt(body.id_token);
  assert.deepEqual(id.groups, ['platform', 'admins']);
  assert.equal(id.aud, 'portal');
  // A confidential client keeps its refresh token until 70% of its life
  // has passed (oidc-provider's default rotateRefreshToken).
  assert.equal(body.refresh_token, portalTokens.refresh_token);

  const revoke = await fetch(disco.revocation_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('portal', 'portal-secret') },
    body: form({ token: portalTokens.refresh_token, token_type_hint: 'refresh_token' }),
  });
  assert.equal(revoke.status, 200);
  const dead = await token({ grant_type: 'refresh_token', refresh_token: portalTokens.refresh_token }, ['portal', 'portal-secret']);
  assert.equal(dead.status, 400);
  assert.equal(dead.body.error, 'invalid_grant');
  await control('users/alice/groups', { groups: ['platform', 'gpu-users'] });
});

let deviceTokens;

test('device flow: user code page, login, polling', async () => {
  const res = await fetch(disco.device_authorization_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ client_id: 'septactl', scope: 'openid email groups offline_access' }),
  });
  assert.equal(res.status, 200);
  const da = await res.json();
  assert.ok(da.device_code && da.user_code && da.verification_uri && da.verification_uri_complete);
  const poll = () => token({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: da.device_code, client_id: 'septactl' });
  const pending = await poll();
  assert.equal(pending.body.error, 'authorization_pending');

  const browser = newBrowser();
  const input = await browser.go(da.verification_uri);
  assert.equal(input.status, 200);
  assert.match(input.html, /name="user_code"/);
  assert.match(input.html, /<button type="submit" form="op.deviceInputForm">/);
  const inputForm = parseForm(input.html, input.url, 'op.deviceInputForm');
  const confirm = await browser.go(inputForm.action, { method: 'POST', body: { ...inputForm.fields, user_code: da.user_code } });
  assert.equal(confirm.status, 200);
  assert.match(confirm.html, /<button type="submit" form="op.deviceConfirmForm">/);
  const confirmForm = parseForm(confirm.html, confirm.url, 'op.deviceConfirmForm');
  assert.equal(confirmForm.fields.confirm, 'yes');
  const login = await browser.go(confirmForm.action, { method: 'POST', body: confirmForm.fields });
  assert.equal(login.status, 200);
  assert.match(login.url, /\/interaction\//);
  const done = await browser.go(login.url, { method: 'POST', body: { login: 'bob', password: 'anything' } });
  assert.equal(done.status, 200);
  assert.match(done.html, /id="device-success"/);

  const { status, body } = await poll();
  assert.equal(status, 200, JSON.stringify(body));
  assert.ok(body.access_token && body.refresh_token && body.id_token);
  const id = decodeJwt(body.id_token);
  assert.equal(id.sub, 'bob');
  assert.equal(id.aud, 'septactl');
  assert.deepEqual(id.groups, ['viewers']);
  deviceTokens = { ...body, poll };
});

test('rotate-keys: keep_old publishes both, without it the old kids are gone; grants survive', async () => {
  const before = await control('keys');
  const beforeKids = (await jwks()).keys.map((k) => k.kid);
  assert.deepEqual(beforeKids, before.kids);
  const oldToken = (await token({ grant_type: 'client_credentials', resource: 'urn:septa' }, ['ci-rs256', 'secret-RS256'])).body.access_token;
  const oldKid = decodeProtectedHeader(oldToken).kid;
  assert.equal(oldKid, before.signing.RS256);

  const kept = await control('rotate-keys', { keep_old: true });
  assert.equal(kept.kids.length, 6);
  const both = (await jwks()).keys.map((k) => k.kid);
  assert.deepEqual(both, kept.kids);
  assert.ok(both.includes(oldKid));
  const newToken = (await token({ grant_type: 'client_credentials', resource: 'urn:septa' }, ['ci-rs256', 'secret-RS256'])).body.access_token;
  assert.equal(decodeProtectedHeader(newToken).kid, kept.signing.RS256);
  assert.notEqual(kept.signing.RS256, oldKid);
  const set = createLocalJWKSet(await jwks());
  await jwtVerify(oldToken, set, { audience: 'septa' });
  await jwtVerify(newToken, set, { audience: 'septa' });

  const gone = await control('rotate-keys', { keep_old: false });
  assert.equal(gone.kids.length, 3);
  const now = (await jwks()).keys.map((k) => k.kid);
  assert.deepEqual(now, gone.kids);
  for (const kid of both) assert.ok(!now.includes(kid), `${kid} still published`);
  await assert.rejects(jwtVerify(oldToken, createLocalJWKSet(await jwks())), { code: 'ERR_JWKS_NO_MATCHING_KEY' });

  // Storage survives the new Provider instance: bob's refresh token works,
  // and the new ID token is signed with the new RS256 key.
  const refreshed = await token({ grant_type: 'refresh_token', refresh_token: deviceTokens.refresh_token, client_id: 'septactl' });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(decodeProtectedHeader(refreshed.body.id_token).kid, gone.signing.RS256);
  // A public client's refresh token rotates on every use.
  assert.notEqual(refreshed.body.refresh_token, deviceTokens.refresh_token);
  // The device code once only (and, like a replayed code, that revokes the grant).
  const used = await deviceTokens.poll();
  assert.equal(used.body.error, 'invalid_grant');
});

test('down: 503 for all but /_test; up: served again; request counts', async () => {
  await control('requests/reset', {});
  await control('down', {});
  const down = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
  assert.equal(down.status, 503);
  assert.equal((await fetch(disco.jwks_uri)).status, 503);
  await control('up', {});
  const up = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
  assert.equal(up.status, 200);
  await jwks();
  await jwks();
  const counts = await control('requests');
  assert.deepEqual(counts, { '/.well-known/openid-configuration': 2, '/jwks': 3 });

  // "hang" holds a request until up; "reset" drops the connection.
  await control('down', { mode: 'hang' });
  let answered = false;
  const held = fetch(disco.jwks_uri).then((r) => { answered = true; return r; });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(answered, false);
  await control('up', {});
  assert.equal((await held).status, 200);
  await control('down', { mode: 'reset' });
  await assert.rejects(fetch(disco.jwks_uri));
  await control('up', {});
  assert.equal((await fetch(disco.jwks_uri)).status, 200);
});

test('SIGTERM: exit 0', async () => {
  const exited = new Promise((resolve) => idp.child.once('exit', (code, signal) => resolve({ code, signal })));
  idp.child.kill('SIGTERM');
  assert.deepEqual(await exited, { code: 0, signal: null });
  assert.match(idp.stderr, /SIGTERM: closing/);
});

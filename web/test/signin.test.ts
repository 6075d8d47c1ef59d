import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SIGN_IN_ERRORS, endSessionTarget, providerHref, signInErrorMessage, withoutSignInError } from '../src/lib/signin';

test('each sign_in_error code septad sends has its own message saying what to do', () => {
  const codes = ['expired', 'denied', 'provider_unavailable', 'refused', 'browser_mismatch'];
  assert.deepEqual(Object.keys(SIGN_IN_ERRORS).sort(), [...codes].sort());
  const messages = codes.map((c) => signInErrorMessage(c));
  assert.equal(new Set(messages).size, codes.length, 'one message per code');
  assert.match(signInErrorMessage('expired')!, /Start again/);
  assert.match(signInErrorMessage('provider_unavailable')!, /cannot be reached.*Try again later.*API token/);
  assert.match(signInErrorMessage('refused')!, /log says why/);
  assert.match(signInErrorMessage('browser_mismatch')!, /another browser/);
  assert.match(signInErrorMessage('denied')!, /refused the sign-in, or it was cancelled/);
});

test('no code is no message; a code this portal does not know still says the sign-in failed', () => {
  assert.equal(signInErrorMessage(null), null);
  assert.match(signInErrorMessage('something_new')!, /did not complete/);
  assert.match(signInErrorMessage('')!, /did not complete/);
  // Not a key of the object's prototype either.
  assert.match(signInErrorMessage('constructor')!, /did not complete/);
});

test('the address is cleaned of sign_in_error and keeps the rest', () => {
  assert.equal(withoutSignInError('?sign_in_error=expired'), '');
  assert.equal(withoutSignInError('?next=%2Ft%2Facme&sign_in_error=denied'), '?next=%2Ft%2Facme');
  assert.equal(withoutSignInError(''), '');
});

test('a provider link is septad’s start path with the page to come back to, never another origin', () => {
  const start = '/v1/sessions/oidc/start?issuer=http%3A%2F%2F127.0.0.1%3A9000';
  const href = providerHref(start, '/t/acme/vclusters?state=READY')!;
  const u = new URL(href, 'http://x.invalid');
  assert.equal(u.pathname, '/v1/sessions/oidc/start');
  assert.equal(u.searchParams.get('issuer'), 'http://127.0.0.1:9000');
  assert.equal(u.searchParams.get('return_to'), '/t/acme/vclusters?state=READY');
  assert.ok(href.startsWith('/v1/sessions/oidc/start?'), href);
  for (const bad of ['https://evil.example/start', '//evil.example/start', '/\\evil.example', 'javascript:alert(1)', '']) {
    assert.equal(providerHref(bad, '/'), null, bad);
  }
});

test('after signing out the browser goes only to an http(s) end-session URL', () => {
  assert.equal(endSessionTarget('https://idp.example/session/end?id_token_hint=x'), 'https://idp.example/session/end?id_token_hint=x');
  assert.equal(endSessionTarget('http://127.0.0.1:4000/session/end'), 'http://127.0.0.1:4000/session/end');
  for (const bad of [undefined, '', 'javascript:alert(1)', 'data:text/html,x', '/relative']) assert.equal(endSessionTarget(bad), null, String(bad));
});

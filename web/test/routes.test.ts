import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeFromFragment, homePath, matchRoute, paths, safeNext, signInPath, tenantOfPath } from '../src/lib/routes';

test('matchRoute matches segment by segment and decodes params', () => {
  assert.deepEqual(matchRoute('/t/:tenant/vclusters/:name', '/t/acme/vclusters/train'), { tenant: 'acme', name: 'train' });
  assert.deepEqual(matchRoute('/t/:tenant', '/t/a%20b/'), { tenant: 'a b' });
  assert.equal(matchRoute('/t/:tenant', '/t/acme/vclusters'), null);
  assert.equal(matchRoute('/tokens', '/tokenz'), null);
  assert.equal(matchRoute('/t/:tenant', '/t/%E0%A4%A'), null, 'malformed escapes do not throw');
});

test('the literal "new" route is distinct from a vcluster named by a param (route order decides)', () => {
  assert.deepEqual(matchRoute('/t/:tenant/vclusters/new', '/t/acme/vclusters/new'), { tenant: 'acme' });
});

test('safeNext keeps only same-origin paths and never loops to sign-in', () => {
  assert.equal(safeNext('/t/acme/vclusters?state=READY'), '/t/acme/vclusters?state=READY');
  for (const bad of [null, '', 'https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/sign-in', '/sign-in?next=/x']) {
    assert.equal(safeNext(bad), '/', String(bad));
  }
});

test('signInPath carries the page to come back to', () => {
  assert.equal(signInPath('/t/acme/vclusters/x'), '/sign-in?next=%2Ft%2Facme%2Fvclusters%2Fx');
  assert.equal(signInPath('/'), '/sign-in');
});

test('the one-time code comes from the fragment', () => {
  assert.equal(codeFromFragment('#code=abc123'), 'abc123');
  assert.equal(codeFromFragment('#x=1&code=q%2Bw'), 'q+w');
  assert.equal(codeFromFragment(''), null);
  assert.equal(codeFromFragment('#code='), null);
});

test('paths encode names; home is the tenant overview or the admin tenant list', () => {
  assert.equal(paths.vcluster('acme', 'a/b'), '/t/acme/vclusters/a%2Fb');
  assert.equal(homePath('acme'), '/t/acme');
  assert.equal(homePath(''), '/admin/tenants');
});

test('the tenant a tenant page names, decoded', () => {
  assert.equal(tenantOfPath('/t/acme'), 'acme');
  assert.equal(tenantOfPath('/t/a%20b/members'), 'a b');
  assert.equal(paths.members('a b'), '/t/a%20b/members');
  for (const other of ['/', '/tokens', '/t/', '/admin/tenants', '/t/%E0%A4%A']) assert.equal(tenantOfPath(other), undefined, other);
});

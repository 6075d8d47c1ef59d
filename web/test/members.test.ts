import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_NAME_BYTES, memberText, nameProblem, viaOf } from '../src/lib/members';

test('a member is its kind and the name exactly as typed', () => {
  assert.equal(memberText('user', 'alice@acme.test'), 'user:alice@acme.test');
  assert.equal(memberText('group', '/eng/ml team'), 'group:/eng/ml team');
});

test('the form refuses what septad refuses: empty, over 256 bytes, control or bidi characters', () => {
  assert.equal(nameProblem('alice@acme.test'), null);
  assert.equal(nameProblem('Ünïcødé Team / ML'), null, 'any printable text, spaces and case kept');
  assert.match(nameProblem('')!, /Enter the name/);
  assert.equal(nameProblem('a'.repeat(MAX_NAME_BYTES)), null);
  assert.match(nameProblem('a'.repeat(MAX_NAME_BYTES + 1))!, /At most 256 bytes/);
  assert.match(nameProblem('é'.repeat(129))!, /At most 256 bytes/, '258 bytes in UTF-8, 129 characters');
  for (const bad of ['a\tb', 'a\nb', 'a\u007fb', 'a\u0085b', 'admin\u202egro', 'x\u2066y', 'x\u200fy']) {
    assert.match(nameProblem(bad)!, /printable/, JSON.stringify(bad));
  }
});

test('via: the members that give the person its role in a tenant', () => {
  const caller = { memberships: [{ tenant: 'acme', role: 'owner', via: ['group:platform', 'user:alice@acme.test'] }] };
  assert.deepEqual(viaOf(caller, 'acme'), ['group:platform', 'user:alice@acme.test']);
  assert.deepEqual(viaOf(caller, 'beta'), []);
  assert.deepEqual(viaOf(undefined, 'acme'), [], 'a token’s session');
});

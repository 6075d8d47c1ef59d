import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Caller, Session } from '../src/api/session-types';
import { actingSession, chooseTenant, mayManage, mayWrite, memberTenants, personTenant, switchTenantPath, tenantSelector } from '../src/lib/tenancy';

const person: Session = {
  kind: 'person', principal: '', tenant: '', role: '', expire_time: '2026-12-01T00:00:00Z', csrf_token: 'c',
  person: { issuer: 'http://idp', user: 'alice@acme.test', groups: ['platform'] },
};
const alice: Caller = {
  user: 'alice@acme.test', groups: ['platform'], admin_by_group: false,
  memberships: [
    { tenant: 'beta', role: 'viewer', via: ['user:alice@acme.test'] },
    { tenant: 'acme', role: 'owner', via: ['group:platform'] },
  ],
};

test('a person’s tenants are its memberships, by name, with their roles', () => {
  assert.deepEqual(memberTenants(alice), [{ tenant: 'acme', role: 'owner' }, { tenant: 'beta', role: 'viewer' }]);
  assert.deepEqual(memberTenants({ memberships: [{ tenant: 'x', role: 'superuser' }, { role: 'owner' }] }), [{ tenant: 'x', role: '' }]);
  assert.deepEqual(memberTenants({}), []);
});

test('the tenant chosen in the tab while still a member, else the only one, else none', () => {
  assert.equal(chooseTenant(['acme', 'beta'], 'beta'), 'beta');
  assert.equal(chooseTenant(['acme', 'beta'], null), '');
  assert.equal(chooseTenant(['acme', 'beta'], 'gone'), '', 'a tenant it left is no choice');
  assert.equal(chooseTenant(['acme'], null), 'acme', 'one membership: chosen');
  assert.equal(chooseTenant(['acme'], 'gone'), 'acme');
  assert.equal(chooseTenant([], 'acme'), '');
});

test('a tenant’s page names the tenant a person acts in; an admin by group acts in none', () => {
  assert.equal(personTenant(alice, '/t/beta/vclusters', 'acme'), 'beta');
  assert.equal(personTenant(alice, '/t/zeta', 'acme'), 'zeta', 'septad answers not found there');
  assert.equal(personTenant(alice, '/tokens', 'acme'), 'acme');
  assert.equal(personTenant(alice, '/tokens', null), '');
  assert.equal(personTenant({ ...alice, admin_by_group: true }, '/t/beta', 'acme'), '');
});

test('the pages see a person as acting in the tenant with its role there', () => {
  assert.deepEqual(pick(actingSession(person, alice, 'acme')), { principal: 'tenant:acme', tenant: 'acme', role: 'owner' });
  assert.deepEqual(pick(actingSession(person, alice, 'beta')), { principal: 'tenant:beta', tenant: 'beta', role: 'viewer' });
  assert.deepEqual(pick(actingSession(person, alice, 'zeta')), { principal: '', tenant: '', role: '' }, 'no role where not a member');
  assert.deepEqual(pick(actingSession(person, alice, '')), { principal: '', tenant: '', role: '' });
  assert.deepEqual(pick(actingSession(person, { ...alice, admin_by_group: true }, '')), { principal: 'admin', tenant: '', role: 'owner' });
  const token: Session = { kind: 'token', principal: 'tenant:acme', tenant: 'acme', role: 'viewer', expire_time: '', csrf_token: 'c' };
  assert.equal(actingSession(token, undefined, 'beta'), token, 'a token’s session as septad said');
});

function pick(s: Session) {
  return { principal: s.principal, tenant: s.tenant, role: s.role };
}

test('owners and editors write resources; only owners manage members and tokens', () => {
  assert.deepEqual(['owner', 'editor', 'viewer', ''].map((r) => mayWrite(r as Session['role'])), [true, true, false, false]);
  assert.deepEqual(['owner', 'editor', 'viewer', ''].map((r) => mayManage(r as Session['role'])), [true, false, false, false]);
});

test('Septa-Tenant goes with requests whose path names no tenant, not with who-am-I reads', () => {
  assert.equal(tenantSelector('/v1/tokens', 'acme'), 'acme');
  assert.equal(tenantSelector('/v1/usage/hoarders', 'acme'), 'acme');
  assert.equal(tenantSelector('/v1/trust-tiers/shared', 'acme'), 'acme');
  assert.equal(tenantSelector('/v1/tenants', 'acme'), 'acme');
  assert.equal(tenantSelector('/v1/tenants/beta', 'acme'), null);
  assert.equal(tenantSelector('/v1/tenants/beta/members/user:x', 'acme'), null);
  assert.equal(tenantSelector('/v1/caller', 'acme'), null);
  assert.equal(tenantSelector('/v1/sessions/current', 'acme'), null);
  assert.equal(tenantSelector('/v1/tokens', ''), null, 'a token’s session or an admin: none');
});

test('switching tenant keeps the section, not one tenant’s virtual cluster', () => {
  assert.equal(switchTenantPath('/t/beta/vclusters', 'acme'), '/t/acme/vclusters');
  assert.equal(switchTenantPath('/t/beta/vclusters/train/edit', 'acme'), '/t/acme/vclusters');
  assert.equal(switchTenantPath('/t/beta/usage', 'a b'), '/t/a%20b/usage');
  assert.equal(switchTenantPath('/t/beta/members', 'acme'), '/t/acme/members');
  assert.equal(switchTenantPath('/t/beta', 'acme'), '/t/acme');
  assert.equal(switchTenantPath('/tokens', 'acme'), '/t/acme');
  assert.equal(switchTenantPath('/admin/usage', 'acme'), '/t/acme', 'an admin page is not a tenant’s section');
});

// Which tenant a person signed in with an identity provider acts in, and
// with which role: septad answers a person's request in the tenant the
// request names (its path), else in the one its Septa-Tenant header names
// (docs/identity.md "People"). The portal keeps a chosen tenant per tab and
// shows pages as the person's role there allows.
import type { Caller, Session } from '../api/session-types';
import { paths, tenantOfPath } from './routes';

export type Role = Session['role'];

/** Whether a role writes a tenant's resources (virtual clusters, kubeconfigs of role edit). */
export function mayWrite(role: Role): boolean {
  return role === 'owner' || role === 'editor';
}

/** Whether a role manages a tenant's members and API tokens: its owners only. */
export function mayManage(role: Role): boolean {
  return role === 'owner';
}

/** The tenants a person may choose, by name, each with its role there. */
export function memberTenants(caller: Caller): { tenant: string; role: Role }[] {
  return (caller.memberships ?? [])
    .filter((m) => m.tenant)
    .map((m) => ({ tenant: m.tenant!, role: asRole(m.role) }))
    .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
}

function asRole(role: string | undefined): Role {
  return role === 'owner' || role === 'editor' || role === 'viewer' ? role : '';
}

/**
 * The tenant a person acts in on a page that names none: the one chosen
 * earlier in this tab while it is still a member of it, else its only
 * tenant; '' when none (no membership, or several and none chosen).
 */
export function chooseTenant(members: string[], remembered: string | null): string {
  if (remembered && members.includes(remembered)) return remembered;
  return members.length === 1 ? members[0]! : '';
}

/**
 * The tenant a person acts in on `path`: the one a tenant's page names
 * (a tenant it is no member of too: septad then answers "not found"), else
 * chooseTenant's; '' for an admin by its groups, who acts as an admin.
 */
export function personTenant(caller: Caller, path: string, remembered: string | null): string {
  if (caller.admin_by_group) return '';
  return tenantOfPath(path) ?? chooseTenant(memberTenants(caller).map((m) => m.tenant), remembered);
}

/**
 * The session as the pages see it: a token's as septad answered it; a
 * person's as it acts in `tenant` (its role there) or, for an admin by its
 * groups, as an admin token's session.
 */
export function actingSession(session: Session, caller: Caller | undefined, tenant: string): Session {
  if (session.kind !== 'person' || !caller) return session;
  if (caller.admin_by_group) return { ...session, principal: 'admin', tenant: '', role: 'owner' };
  const role = memberTenants(caller).find((m) => m.tenant === tenant)?.role ?? '';
  return role ? { ...session, principal: `tenant:${tenant}`, tenant, role } : { ...session, principal: '', tenant: '', role: '' };
}

/**
 * The Septa-Tenant header of a person's request to `path`: the tenant it
 * acts in, unless the path names a tenant itself (/v1/tenants/<name>…,
 * which septad takes first) or asks who the person is (/v1/sessions,
 * /v1/caller: every membership, whatever the tenant). null: no header.
 */
export function tenantSelector(path: string, tenant: string): string | null {
  if (!tenant) return null;
  if (/^\/v1\/tenants\/[^/]+/.test(path)) return null;
  if (path === '/v1/caller' || path === '/v1/sessions' || path.startsWith('/v1/sessions/')) return null;
  return tenant;
}

/** The tenant pages that exist in every tenant, kept when switching tenant. */
const SECTIONS = new Set(['vclusters', 'usage', 'members']);

/**
 * Where switching to `tenant` leads from `path`: the same section in the
 * other tenant (its virtual clusters, usage or members), else its Overview
 * (a virtual cluster of one tenant is no page of another).
 */
export function switchTenantPath(path: string, tenant: string): string {
  const section = tenantOfPath(path) ? path.split('/')[3] : undefined;
  const overview = paths.overview(tenant);
  return section && SECTIONS.has(section) ? `${overview}/${section}` : overview;
}

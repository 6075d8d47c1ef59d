import { useEffect, useRef } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { setActingTenant, setUnauthorizedHandler } from './api/client';
import { connectionLost } from './lib/connection';
import { currentPath, navigate, useLocation } from './lib/router';
import { homePath, matchRoute, paths, signInPath, tenantOfPath, type Params } from './lib/routes';
import { loadSession, rememberTenant, rememberedTenant, sessionStore, signOut, signedOut, type SessionState } from './lib/session';
import { endSessionTarget } from './lib/signin';
import { actingSession, memberTenants, personTenant } from './lib/tenancy';
import { useStore } from './lib/store';
import type { Caller, Session } from './api/session-types';
import { SignIn } from './pages/SignIn';
import { Overview } from './pages/Overview';
import { VClusterList } from './pages/VClusterList';
import { VClusterForm } from './pages/VClusterForm';
import { VClusterDetail } from './pages/VClusterDetail';
import { Tokens } from './pages/Tokens';
import { Usage } from './pages/Usage';
import { Tenants } from './pages/admin/Tenants';
import { Inventory } from './pages/admin/Inventory';
import { TrustTiers } from './pages/admin/TrustTiers';
import { PlatformUsage } from './pages/admin/PlatformUsage';
import { Members } from './pages/Members';
import { YourTenants } from './pages/YourTenants';
import { NotFound } from './pages/NotFound';
import { AdminTenantPicker, TenantPicker } from './components/TenantPicker';

export interface PageProps {
  params: Params;
  /** The session as the page acts: a person's in the tenant of the page or of the tab (lib/tenancy.ts). */
  session: Session;
  /** A person's identity and memberships (GET /v1/caller); undefined for an API token's session. */
  caller?: Caller | undefined;
}

interface Route {
  pattern: string;
  page: ComponentType<PageProps>;
  adminOnly?: boolean;
}

const ROUTES: Route[] = [
  { pattern: '/t/:tenant', page: Overview },
  { pattern: '/t/:tenant/vclusters', page: VClusterList },
  { pattern: '/t/:tenant/vclusters/new', page: VClusterForm },
  { pattern: '/t/:tenant/vclusters/:name', page: VClusterDetail },
  { pattern: '/t/:tenant/vclusters/:name/edit', page: VClusterForm },
  { pattern: '/t/:tenant/usage', page: Usage },
  { pattern: '/t/:tenant/members', page: Members },
  { pattern: paths.tokens, page: Tokens },
  { pattern: paths.tenants, page: Tenants, adminOnly: true },
  { pattern: paths.inventory, page: Inventory, adminOnly: true },
  { pattern: paths.tiers, page: TrustTiers, adminOnly: true },
  { pattern: paths.platformUsage, page: PlatformUsage, adminOnly: true },
];

// A 401 from any API call (an expired or revoked session) returns to
// sign-in, which comes back here afterwards.
setUnauthorizedHandler(() => {
  if (window.location.pathname === '/sign-in') return;
  const back = currentPath();
  signedOut();
  navigate(signInPath(back), { replace: true });
});

// A person's requests that name no tenant carry the one it acts in
// (Septa-Tenant); read at each request, from the page's path and the tab's choice.
setActingTenant(() => {
  const state = sessionStore.get();
  return state.status === 'signed-in' && state.caller ? personTenant(state.caller, window.location.pathname, rememberedTenant()) : '';
});

/** Replaces the current history entry (not during render: in an effect). */
function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function ConnectionBanner() {
  const lost = useStore(connectionLost);
  return (
    <div class={lost ? 'banner banner--lost' : 'banner'} role="status" aria-live="polite">
      {lost ? 'Connection to Septa lost; retrying…' : ''}
    </div>
  );
}

function Nav({ session }: { session: Session }) {
  const { path } = useLocation();
  const link = (href: string, text: string) => (
    <li>
      <a href={href} aria-current={path === href ? 'page' : undefined}>
        {text}
      </a>
    </li>
  );
  const admin = session.principal === 'admin';
  const tenant = session.tenant || tenantOfPath(path);
  return (
    <nav aria-label="Main">
      <ul>
        {tenant ? link(paths.overview(tenant), 'Overview') : null}
        {tenant ? link(paths.vclusters(tenant), 'Virtual clusters') : null}
        {tenant ? link(paths.usage(tenant), 'Usage') : null}
        {tenant ? link(paths.members(tenant), 'Members') : null}
        {session.principal ? link(paths.tokens, 'API tokens') : null}
        {admin ? link(paths.tenants, 'Tenants') : null}
        {admin ? link(paths.inventory, 'GPU inventory') : null}
        {admin ? link(paths.tiers, 'Trust tiers') : null}
        {admin ? link(paths.platformUsage, 'Platform usage') : null}
      </ul>
    </nav>
  );
}

/** Who is signed in, in the header: a token's principal, or a person's user name; with the role it acts with. */
function who(session: Session, acting: Session): string {
  const name = session.kind === 'person' ? session.person?.user ?? '' : session.principal;
  const role = acting.principal === 'admin' && session.kind === 'person' ? 'admin' : acting.role;
  return role ? `${name} (${role})` : name;
}

function Shell({ session, caller }: { session: Session; caller: Caller | undefined }) {
  const { path } = useLocation();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After an in-app navigation, move focus to the new page so keyboard and
  // screen-reader users start there (not on the first page load).
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [path]);

  const members = caller && !caller.admin_by_group ? memberTenants(caller) : undefined;
  const pathTenant = tenantOfPath(path);
  // A tenant's page of one of the person's tenants is its choice for this tab.
  useEffect(() => {
    if (pathTenant && members?.some((m) => m.tenant === pathTenant)) rememberTenant(pathTenant);
  }, [pathTenant, caller]);
  const acting = actingSession(session, caller, caller ? personTenant(caller, path, rememberedTenant()) : '');
  const admin = acting.principal === 'admin';

  let page = <NotFound />;
  if (members && (members.length === 0 || (!acting.tenant && !pathTenant))) {
    // A person with no tenant, or several and none chosen yet.
    page = <YourTenants caller={caller!} />;
  } else if (path === '/') {
    return <Redirect to={homePath(acting.tenant)} />;
  } else {
    for (const r of ROUTES) {
      const params = matchRoute(r.pattern, path);
      if (!params) continue;
      const Page = r.page;
      page = r.adminOnly && !admin ? <NotFound /> : <Page params={params} session={acting} caller={caller} />;
      break;
    }
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Septa
        </a>
        <Nav session={acting} />
        <div class="who">
          {admin ? <AdminTenantPicker current={pathTenant} /> : null}
          {members?.length ? <TenantPicker current={acting.tenant || undefined} choices={members.map((m) => ({ tenant: m.tenant, label: `${m.tenant} (${m.role})` }))} /> : null}
          <span>{who(session, acting)}</span>
          <button type="button" class="btn" onClick={() => void signOutAndLeave()}>
            Sign out
          </button>
        </div>
      </header>
      <ConnectionBanner />
      <main id="main" ref={main} tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

/** Signs out; a person then goes through its provider's end-session page, which returns to the portal. */
async function signOutAndLeave(): Promise<void> {
  // The page is signed out whatever the answer (signOut forgets the
  // session): a failed request only loses the provider's end-session URL.
  const endSession = endSessionTarget(await signOut().catch(() => undefined));
  if (endSession) window.location.assign(endSession);
  else navigate('/sign-in');
}

export function App() {
  const state: SessionState = useStore(sessionStore);
  const { path } = useLocation();
  useEffect(() => {
    loadSession().catch(() => signedOut());
  }, []);

  if (path === '/sign-in') {
    return (
      <>
        <ConnectionBanner />
        <main id="main" tabIndex={-1}>
          <SignIn />
        </main>
      </>
    );
  }
  if (state.status === 'loading') {
    return (
      <main id="main" class="loading" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }
  if (state.status === 'signed-out') return <Redirect to={signInPath(currentPath())} />;
  return <Shell session={state.session} caller={state.caller} />;
}

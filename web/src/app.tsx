import { useEffect, useRef } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { setUnauthorizedHandler } from './api/client';
import { connectionLost } from './lib/connection';
import { currentPath, navigate, useLocation } from './lib/router';
import { homePath, matchRoute, paths, signInPath, type Params } from './lib/routes';
import { loadSession, sessionStore, signOut, signedOut, type SessionState } from './lib/session';
import { useStore } from './lib/store';
import type { Session } from './api/session-types';
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
import { NotFound } from './pages/NotFound';
import { TenantPicker } from './components/TenantPicker';

export interface PageProps {
  params: Params;
  session: Session;
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
        {link(paths.tokens, 'API tokens')}
        {admin ? link(paths.tenants, 'Tenants') : null}
        {admin ? link(paths.inventory, 'GPU inventory') : null}
        {admin ? link(paths.tiers, 'Trust tiers') : null}
        {admin ? link(paths.platformUsage, 'Platform usage') : null}
      </ul>
    </nav>
  );
}

function tenantOfPath(path: string): string | undefined {
  const parts = path.split('/');
  return parts[1] === 't' && parts[2] ? decodeURIComponent(parts[2]) : undefined;
}

function Shell({ session }: { session: Session }) {
  const { path } = useLocation();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After an in-app navigation, move focus to the new page so keyboard and
  // screen-reader users start there (not on the first page load).
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [path]);

  if (path === '/') return <Redirect to={homePath(session.tenant)} />;
  let page = <NotFound />;
  for (const r of ROUTES) {
    const params = matchRoute(r.pattern, path);
    if (!params) continue;
    const Page = r.page;
    page = r.adminOnly && session.principal !== 'admin' ? <NotFound /> : <Page params={params} session={session} />;
    break;
  }
  const admin = session.principal === 'admin';
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Septa
        </a>
        <Nav session={session} />
        <div class="who">
          {admin ? <TenantPicker current={tenantOfPath(path)} /> : null}
          <span>
            {session.principal} ({session.role})
          </span>
          <button type="button" class="btn" onClick={() => signOut().then(() => navigate('/sign-in'))}>
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
  return <Shell session={state.session} />;
}

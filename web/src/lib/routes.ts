// Client-side routes are real paths (septad serves index.html for them).

export type Params = Record<string, string>;

/** Matches "/t/:tenant/vclusters/:name" against a path; decoded params or null. */
export function matchRoute(pattern: string, path: string): Params | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Params = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) {
      try {
        params[w.slice(1)] = decodeURIComponent(h);
      } catch {
        return null;
      }
    } else if (w !== h) {
      return null;
    }
  }
  return params;
}

/**
 * The page to return to after sign-in: only a path of this origin (not
 * "//evil.example", not a URL, not the sign-in page itself); else "/".
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next === '/sign-in' || next.startsWith('/sign-in?') || next.startsWith('/sign-in#')) return '/';
  return next;
}

export function signInPath(returnTo: string): string {
  const next = safeNext(returnTo);
  return next === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(next)}`;
}

/** The one-time code of a "#code=..." sign-in link, or null. */
export function codeFromFragment(hash: string): string | null {
  const code = new URLSearchParams(hash.replace(/^#/, '')).get('code');
  return code && code.trim() ? code.trim() : null;
}

const seg = encodeURIComponent;
export const paths = {
  overview: (tenant: string) => `/t/${seg(tenant)}`,
  vclusters: (tenant: string) => `/t/${seg(tenant)}/vclusters`,
  newVcluster: (tenant: string) => `/t/${seg(tenant)}/vclusters/new`,
  vcluster: (tenant: string, name: string) => `/t/${seg(tenant)}/vclusters/${seg(name)}`,
  resizeVcluster: (tenant: string, name: string) => `/t/${seg(tenant)}/vclusters/${seg(name)}/edit`,
  usage: (tenant: string) => `/t/${seg(tenant)}/usage`,
  members: (tenant: string) => `/t/${seg(tenant)}/members`,
  tokens: '/tokens',
  tenants: '/admin/tenants',
  inventory: '/admin/inventory',
  tiers: '/admin/trust-tiers',
  platformUsage: '/admin/usage',
};

/** The tenant a /t/<tenant>/… path names, decoded; undefined for any other path. */
export function tenantOfPath(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[1] !== 't' || !parts[2]) return undefined;
  try {
    return decodeURIComponent(parts[2]);
  } catch {
    return undefined;
  }
}

/** Where "/" leads a principal: its tenant's overview, or an admin's tenant list. */
export function homePath(tenant: string): string {
  return tenant ? paths.overview(tenant) : paths.tenants;
}

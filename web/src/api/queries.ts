// Reads several pages share.
import { api, call, listAll } from './client';
import { ApiError } from './problem';
import type { ApiToken, Credential, FreeCapacity, Hoarder, InventoryFreeCapacity, InventoryNode, PlatformUsageReport, Tenant, TrustTier, UsageReport, VClusterState, VirtualCluster, VirtualPodPage } from './types';

export async function listVClusters(tenant: string): Promise<VirtualCluster[]> {
  return listAll(async (page_token) => {
    const r = await call(api.GET('/v1/tenants/{tenant}/vclusters', { params: { path: { tenant }, query: { page_size: 500, page_token } } }));
    return { items: r.virtual_clusters ?? [], next: r.next_page_token };
  });
}

/** How many of a tenant's virtual clusters are in `state` (every page of that state: no API call counts). */
export async function countVClusters(tenant: string, state: VClusterState): Promise<number> {
  const all = await listAll(async (page_token) => {
    const r = await call(api.GET('/v1/tenants/{tenant}/vclusters', { params: { path: { tenant }, query: { page_size: 500, page_token, filter: `state=${state}` } } }));
    return { items: r.virtual_clusters ?? [], next: r.next_page_token };
  });
  return all.length;
}

export async function listTenants(): Promise<Tenant[]> {
  return listAll(async (page_token) => {
    const r = await call(api.GET('/v1/tenants', { params: { query: { page_size: 500, page_token } } }));
    return { items: r.tenants ?? [], next: r.next_page_token };
  });
}

export async function listNodes(): Promise<InventoryNode[]> {
  return listAll(async (page_token) => {
    const r = await call(api.GET('/v1/inventory/nodes', { params: { query: { page_size: 1000, page_token } } }));
    return { items: r.nodes ?? [], next: r.next_page_token };
  });
}

export async function listCredentials(tenant: string, vcluster: string): Promise<Credential[]> {
  return listAll(async (page_token) => {
    const r = await call(
      api.GET('/v1/tenants/{tenant}/vclusters/{vcluster}/credentials', { params: { path: { tenant, vcluster }, query: { page_size: 500, page_token } } }),
    );
    return { items: r.credentials ?? [], next: r.next_page_token };
  });
}

/** The tenant's live kubeconfig certificates, of every virtual cluster, that expire within `seconds`: one read. */
export async function listExpiringCredentials(tenant: string, seconds: number): Promise<Credential[]> {
  return listAll(async (page_token) => {
    const r = await call(
      api.GET('/v1/tenants/{tenant}/vclusters/{vcluster}/credentials', {
        params: { path: { tenant, vcluster: '-' }, query: { page_size: 500, page_token, expiring_within_seconds: String(seconds) } },
      }),
    );
    return { items: r.credentials ?? [], next: r.next_page_token };
  });
}

/** How many of a virtual cluster's pods that do not run the detail page lists: one page, the API's default. */
export const NOT_RUNNING_PAGE_SIZE = 100;

/**
 * The first page of a virtual cluster's pods that are not Running or
 * Succeeded, by namespace then name; null when its Kubernetes API runs on
 * the host cluster, whose pods septad does not read (412 FAILED_PRECONDITION).
 */
export async function notRunningPods(tenant: string, vcluster: string): Promise<VirtualPodPage | null> {
  try {
    return await call(
      api.GET('/v1/tenants/{tenant}/vclusters/{vcluster}/pods', { params: { path: { tenant, vcluster }, query: { not_running: true, page_size: NOT_RUNNING_PAGE_SIZE } } }),
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === 'FAILED_PRECONDITION') return null;
    throw err;
  }
}

export async function getTenant(name: string): Promise<Tenant> {
  return call(api.GET('/v1/tenants/{name}', { params: { path: { name } } }));
}

export async function getTier(name: string): Promise<TrustTier> {
  return call(api.GET('/v1/trust-tiers/{name}', { params: { path: { name } } }));
}

export async function listTokens(): Promise<ApiToken[]> {
  return (await call(api.GET('/v1/tokens'))).tokens ?? [];
}

export async function getFreeCapacity(tenant: string): Promise<FreeCapacity> {
  return call(api.GET('/v1/tenants/{tenant}/free-capacity', { params: { path: { tenant } } }));
}

export async function getInventoryFreeCapacity(): Promise<InventoryFreeCapacity> {
  return call(api.GET('/v1/inventory/free-capacity'));
}

/** A usage report over a window (start, end RFC 3339; step "" for one bucket), grouped by `groupBy`. */
export async function getTenantUsage(tenant: string, start: string, end: string, step: string, groupBy: string[] = []): Promise<UsageReport> {
  const query = { start, end, ...(step ? { step } : {}), ...(groupBy.length ? { group_by: groupBy } : {}) };
  return call(api.GET('/v1/tenants/{tenant}/usage', { params: { path: { tenant }, query } }));
}

export async function getPlatformUsage(start: string, end: string, step: string, groupBy: string[] = []): Promise<PlatformUsageReport> {
  const query = { start, end, ...(step ? { step } : {}), ...(groupBy.length ? { group_by: groupBy } : {}) };
  return call(api.GET('/v1/usage', { params: { query } }));
}

/** Virtual clusters idle past their tier's threshold now: one tenant's, or (admins, no tenant) everyone's. */
export async function listHoarders(tenant?: string): Promise<Hoarder[]> {
  return (await call(api.GET('/v1/usage/hoarders', { params: { query: tenant ? { tenant } : {} } }))).hoarders ?? [];
}

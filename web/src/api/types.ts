// Short names for the generated schema types the pages use.
import type { components } from './schema';

type S = components['schemas'];
export type Tenant = S['Tenant'];
export type TenantQuota = S['TenantQuota'];
export type TenantQuotaStatus = S['TenantQuotaStatus'];
export type TrustTier = S['TrustTier'];
export type GpuSharing = S['TrustTier.GpuSharing'];
export type VirtualCluster = S['VirtualCluster'];
export type VClusterState = S['VirtualCluster.State'];
export type Capacity = S['Capacity'];
export type Condition = S['Condition'];
export type Reservation = S['Reservation'];
export type ApiToken = S['ApiToken'];
export type Credential = S['Credential'];
export type InventoryNode = S['InventoryNode'];
export type InventoryGpu = S['InventoryGpu'];
export type Holder = S['Holder'];
export type FreeCapacity = S['FreeCapacity'];
export type VirtualPod = S['VirtualPod'];
export type VirtualPodPage = S['ListVirtualClusterPodsResponse'];
export type InventoryFreeCapacity = S['InventoryFreeCapacity'];
export type UsageReport = S['UsageReport'];
export type UsageItem = S['UsageItem'];
export type PlatformUsageReport = S['PlatformUsageReport'];
export type UsagePoolItem = S['UsagePoolItem'];
export type Hoarder = S['Hoarder'];
export type TenantMember = S['TenantMember'];

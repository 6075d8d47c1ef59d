import { useEffect, useState } from 'preact/hooks';
import { listTenants } from '../api/queries';
import { useAsync } from '../lib/hooks';
import { navigate, useLocation } from '../lib/router';
import { switchTenantPath } from '../lib/tenancy';

export interface TenantChoice {
  tenant: string;
  label: string;
}

/**
 * Opens another tenant's pages (the same section, lib/tenancy.ts): choose,
 * then press Open (no navigation on mere selection). An admin chooses among
 * every tenant, a person among its memberships.
 */
export function TenantPicker({ current, choices }: { current: string | undefined; choices: TenantChoice[] }) {
  const { path } = useLocation();
  const [chosen, setChosen] = useState(current ?? '');
  useEffect(() => setChosen(current ?? ''), [current]);
  return (
    <form
      class="picker"
      onSubmit={(e) => {
        e.preventDefault();
        if (chosen) navigate(switchTenantPath(path, chosen));
      }}
    >
      <label for="tenant-picker">Tenant</label>
      <select id="tenant-picker" value={chosen} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
        <option value="">Choose…</option>
        {choices.map((c) => <option key={c.tenant} value={c.tenant}>{c.label}</option>)}
      </select>
      <button type="submit" class="btn">Open</button>
    </form>
  );
}

/** The admins' picker: every tenant. */
export function AdminTenantPicker({ current }: { current: string | undefined }) {
  const tenants = useAsync(listTenants, []);
  return <TenantPicker current={current} choices={(tenants.data ?? []).map((t) => ({ tenant: t.name!, label: t.name! }))} />;
}

import { useEffect, useState } from 'preact/hooks';
import { listTenants } from '../api/queries';
import { useAsync } from '../lib/hooks';
import { navigate } from '../lib/router';
import { paths } from '../lib/routes';

/** An admin opens a tenant's pages: choose, then press Open (no navigation on mere selection). */
export function TenantPicker({ current }: { current: string | undefined }) {
  const tenants = useAsync(listTenants, []);
  const [chosen, setChosen] = useState(current ?? '');
  useEffect(() => setChosen(current ?? ''), [current]);
  return (
    <form
      class="picker"
      onSubmit={(e) => {
        e.preventDefault();
        if (chosen) navigate(paths.overview(chosen));
      }}
    >
      <label for="tenant-picker">Tenant</label>
      <select id="tenant-picker" value={chosen} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
        <option value="">Choose…</option>
        {(tenants.data ?? []).map((t) => <option key={t.name} value={t.name}>{t.name}</option>)}
      </select>
      <button type="submit" class="btn">Open</button>
    </form>
  );
}

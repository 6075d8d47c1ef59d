import { useState } from 'preact/hooks';
import type { PageProps } from '../../app';
import { api, call } from '../../api/client';
import { ApiError, fieldErrors, type FieldErrors } from '../../api/problem';
import { listTenants } from '../../api/queries';
import type { Tenant, TenantQuota } from '../../api/types';
import { useAsync, useTitle } from '../../lib/hooks';
import { paths } from '../../lib/routes';
import { formatCpuMilli, formatGpuMilli, formatMiB } from '../../lib/quantity';
import { Field } from '../../components/Field';
import { ErrorBox, FormErrors } from '../../components/ErrorBox';
import { ConfirmDelete } from '../../components/ConfirmDelete';
import { THead } from '../../components/Table';

const QUOTA_FIELDS: { field: keyof TenantQuota; label: string }[] = [
  { field: 'gpu_milli', label: 'GPU-equivalents (thousandths)' },
  { field: 'vclusters', label: 'Virtual clusters' },
  { field: 'cpu_milli', label: 'CPU (millicores)' },
  { field: 'memory_mib', label: 'Memory (MiB)' },
  { field: 'pods', label: 'Pods' },
];

/** Empty inputs stay absent (unlimited); the rest are sent as typed for the server to judge. */
function quotaOf(v: Record<string, string>): TenantQuota | undefined {
  const q: TenantQuota = {};
  for (const { field } of QUOTA_FIELDS) {
    const s = (v[`quota.${field}`] ?? '').trim();
    if (s) q[field] = Number(s);
  }
  return Object.keys(q).length ? q : undefined;
}

function quotaText(q: TenantQuota | undefined): string {
  if (!q) return 'unlimited';
  const parts: string[] = [];
  if (q.gpu_milli !== undefined) parts.push(`${formatGpuMilli(q.gpu_milli)} GPU`);
  if (q.vclusters !== undefined) parts.push(`${q.vclusters} vclusters`);
  if (q.cpu_milli !== undefined) parts.push(`${formatCpuMilli(q.cpu_milli)} CPU`);
  if (q.memory_mib !== undefined) parts.push(formatMiB(q.memory_mib));
  if (q.pods !== undefined) parts.push(`${q.pods} pods`);
  return parts.join(', ') || 'unlimited';
}

function quotaValues(q: TenantQuota | undefined): Record<string, string> {
  const v: Record<string, string> = {};
  for (const { field } of QUOTA_FIELDS) if (q?.[field] !== undefined) v[`quota.${field}`] = String(q[field]);
  return v;
}

/** Replaces a tenant's whole quota (update_mask=quota: an empty input becomes unlimited). */
function QuotaEditor({ t, onChange }: { t: Tenant; onChange: () => void }) {
  const [v, setV] = useState(() => quotaValues(t.quota));
  const [errors, setErrors] = useState<FieldErrors>({ byField: {}, unplaced: [] });
  const [failure, setFailure] = useState<unknown>(null);
  const save = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    setErrors({ byField: {}, unplaced: [] });
    try {
      await call(
        api.PATCH('/v1/tenants/{name}', {
          params: { path: { name: t.name! }, query: { update_mask: 'quota' }, header: { 'If-Match': t.etag ?? '*' } },
          body: { quota: quotaOf(v) ?? {} },
        }),
      );
      onChange();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, QUOTA_FIELDS.map((q) => `quota.${q.field}`)));
      setFailure(err);
    }
  };
  return (
    <form onSubmit={save} noValidate aria-label={`Quota of ${t.name}`}>
      {QUOTA_FIELDS.map((q) => (
        <Field key={q.field} idScope={`quota-of-${t.name}`} name={`quota.${q.field}`} label={q.label} inputMode="numeric" value={v[`quota.${q.field}`] ?? ''} onInput={(x) => setV({ ...v, [`quota.${q.field}`]: x })} errors={errors.byField[`quota.${q.field}`]} />
      ))}
      {failure && !Object.keys(errors.byField).length ? <ErrorBox error={failure} context="Quota not changed" /> : null}
      <button type="submit" class="btn">Save quota<span class="visually-hidden"> of {t.name}</span></button>
    </form>
  );
}

function TenantRow({ t, onChange }: { t: Tenant; onChange: () => void }) {
  const [failure, setFailure] = useState<unknown>(null);
  const [open, setOpen] = useState(false);
  const suspended = t.state === 'SUSPENDED';
  const toggle = async () => {
    setFailure(null);
    try {
      await call(
        api.PATCH('/v1/tenants/{name}', {
          params: { path: { name: t.name! }, query: { update_mask: 'state' }, header: { 'If-Match': t.etag ?? '*' } },
          body: { state: suspended ? 'ACTIVE' : 'SUSPENDED' },
        }),
      );
      onChange();
    } catch (err) {
      setFailure(err);
    }
  };
  return (
    <tr data-tenant={t.name}>
      <th scope="row"><a href={paths.overview(t.name!)}>{t.name}</a></th>
      <td class="display-name">{t.display_name}</td>
      <td>{t.trust_tier}</td>
      <td>{t.state}</td>
      <td>
        {quotaText(t.quota)}
        <details>
          <summary>Edit<span class="visually-hidden"> the quota of {t.name}</span></summary>
          <QuotaEditor key={t.etag} t={t} onChange={onChange} />
        </details>
      </td>
      <td>
        <button type="button" class="btn" onClick={toggle}>{suspended ? 'Resume' : 'Suspend'}<span class="visually-hidden"> {t.name}</span></button>{' '}
        <button type="button" class="btn" aria-expanded={open} onClick={() => setOpen(!open)}>Delete…<span class="visually-hidden"> {t.name}</span></button>
        {open ? (
          <ConfirmDelete
            name={t.name!}
            what={`tenant ${t.name}`}
            onDelete={async () => {
              await call(api.DELETE('/v1/tenants/{name}', { params: { path: { name: t.name! } } }));
              onChange();
            }}
          />
        ) : null}
        <ErrorBox error={failure} />
      </td>
    </tr>
  );
}

export function Tenants(_: PageProps) {
  useTitle('Tenants');
  const tenants = useAsync(listTenants, []);
  const tiers = useAsync(async () => (await call(api.GET('/v1/trust-tiers'))).trust_tiers ?? [], []);
  const [v, setV] = useState<Record<string, string>>({ trust_tier: 'shared' });
  const [errors, setErrors] = useState<FieldErrors>({ byField: {}, unplaced: [] });
  const [failure, setFailure] = useState<unknown>(null);
  const set = (k: string) => (value: string) => setV({ ...v, [k]: value });
  const fields = ['name', 'display_name', 'trust_tier', ...QUOTA_FIELDS.map((q) => `quota.${q.field}`)];

  const create = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    setErrors({ byField: {}, unplaced: [] });
    try {
      const quota = quotaOf(v);
      await call(
        api.POST('/v1/tenants', {
          body: { name: (v.name ?? '').trim(), display_name: v.display_name ?? '', trust_tier: v.trust_tier ?? '', ...(quota ? { quota } : {}) },
        }),
      );
      setV({ trust_tier: v.trust_tier ?? 'shared' });
      tenants.reload();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, fields));
      setFailure(err);
    }
  };

  return (
    <section aria-labelledby="ten-h">
      <h1 id="ten-h">Tenants</h1>
      <form onSubmit={create} class="card" aria-labelledby="ten-new-h" noValidate>
        <h2 id="ten-new-h">New tenant</h2>
        <Field name="name" label="Name" value={v.name ?? ''} onInput={set('name')} errors={errors.byField.name} required />
        <Field name="display_name" label="Display name" value={v.display_name ?? ''} onInput={set('display_name')} errors={errors.byField.display_name} />
        <Field
          name="trust_tier"
          label="Trust tier"
          value={v.trust_tier ?? ''}
          onInput={set('trust_tier')}
          errors={errors.byField.trust_tier}
          options={(tiers.data ?? [{ name: v.trust_tier ?? '' }]).map((t) => ({ value: t.name ?? '', label: t.name ?? '' }))}
        />
        <fieldset>
          <legend>Quota (empty: unlimited)</legend>
          {QUOTA_FIELDS.map((q) => (
            <Field key={q.field} name={`quota.${q.field}`} label={q.label} inputMode="numeric" value={v[`quota.${q.field}`] ?? ''} onInput={set(`quota.${q.field}`)} errors={errors.byField[`quota.${q.field}`]} />
          ))}
        </fieldset>
        <FormErrors errors={errors} failure={failure} context="Not created" />
        <button type="submit" class="btn btn--primary">Create tenant</button>
      </form>
      <ErrorBox error={tenants.error} />
      {tenants.data ? (
        <table class="list">
          <THead cols={['Name', 'Display name', 'Tier', 'State', 'Quota', 'Actions']} />
          <tbody>{tenants.data.map((t) => <TenantRow key={t.name} t={t} onChange={tenants.reload} />)}</tbody>
        </table>
      ) : null}
    </section>
  );
}

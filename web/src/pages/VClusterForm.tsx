import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { ApiError, fieldErrors, type FieldErrors } from '../api/problem';
import { getTenant, getTier } from '../api/queries';
import type { VirtualCluster } from '../api/types';
import { useAsync, useTitle } from '../lib/hooks';
import { navigate } from '../lib/router';
import { paths } from '../lib/routes';
import { capacityKindOf } from '../lib/quota';
import { CAPACITY_INPUTS, MIG_PROFILES, WORKLOAD_FIELDS, capacityBody, formValuesOf, quotaAliases, type FormValues } from '../lib/capacity';
import { Field } from '../components/Field';
import { ErrorBox } from '../components/ErrorBox';

const WORKLOAD_LABELS: Record<(typeof WORKLOAD_FIELDS)[number], string> = {
  'quota.cpu_milli': 'CPU limit (millicores)',
  'quota.memory_mib': 'Memory limit (MiB)',
  'quota.pods': 'Pods limit',
};

function int(v: string | undefined): number {
  return v && v.trim() ? Number(v.trim()) : 0;
}

/** Create a virtual cluster, or resize one (route …/:name/edit): only the capacity kind the tier holds is offered. */
export function VClusterForm({ params }: PageProps) {
  const tenant = params.tenant!;
  const editing = params.name;
  useTitle(editing ? `Resize ${editing}` : 'New virtual cluster');
  const ctx = useAsync(async () => {
    const t = await getTenant(tenant);
    const tier = await getTier(t.trust_tier ?? '');
    const vc = editing ? await call(api.GET('/v1/tenants/{tenant}/vclusters/{name}', { params: { path: { tenant, name: editing } } })) : undefined;
    return { tier, vc };
  }, [tenant, editing]);
  const [values, setValues] = useState<FormValues | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({ byField: {}, unplaced: [] });
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const h1 = editing ? `Resize ${editing}` : 'New virtual cluster';
  if (!ctx.data) {
    return (
      <section aria-labelledby="vcf-h">
        <h1 id="vcf-h">{h1}</h1>
        {ctx.error ? <ErrorBox error={ctx.error} /> : <p aria-busy="true">Loading…</p>}
      </section>
    );
  }
  const kind = capacityKindOf(ctx.data.tier.gpu_sharing);
  if (!kind) return <ErrorBox error={new Error(`The trust tier ${ctx.data.tier.name} has no GPU sharing mode this form knows.`)} />;
  const inputs = CAPACITY_INPUTS[kind];
  const v: FormValues = values ?? (ctx.data.vc ? formValuesOf(ctx.data.vc) : { 'capacity.mig[0].profile': MIG_PROFILES[3]! });
  const set = (field: string) => (value: string) => setValues({ ...v, [field]: value });
  const formFields = ['name', 'display_name', ...inputs.map((i) => i.field), ...WORKLOAD_FIELDS];

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(null);
    setErrors({ byField: {}, unplaced: [] });
    const body: VirtualCluster = {
      display_name: (v.display_name ?? '').trim(),
      capacity: capacityBody(kind, v),
      quota: { cpu_milli: int(v['quota.cpu_milli']), memory_mib: int(v['quota.memory_mib']), pods: int(v['quota.pods']) },
    };
    try {
      if (editing) {
        await call(
          api.PATCH('/v1/tenants/{tenant}/vclusters/{name}', {
            params: { path: { tenant, name: editing }, query: { update_mask: 'display_name,capacity,quota' }, header: { 'If-Match': ctx.data!.vc?.etag ?? '*' } },
            body,
          }),
        );
        navigate(paths.vcluster(tenant, editing));
      } else {
        const name = (v.name ?? '').trim();
        await call(api.POST('/v1/tenants/{tenant}/vclusters', { params: { path: { tenant } }, body: { ...body, name } }));
        navigate(paths.vcluster(tenant, name));
      }
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, formFields, quotaAliases(kind)));
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="vcf-h">
      <h1 id="vcf-h">{h1}</h1>
      <p>
        Tier <strong>{ctx.data.tier.display_name}</strong>: {ctx.data.tier.description}
      </p>
      <form onSubmit={submit} noValidate data-kind={kind}>
        {editing ? null : (
          <Field name="name" label="Name" value={v.name ?? ''} onInput={set('name')} errors={errors.byField.name} required hint="Lower-case letters, digits and -, 1-40 characters; cannot change later." />
        )}
        <Field name="display_name" label="Display name" value={v.display_name ?? ''} onInput={set('display_name')} errors={errors.byField.display_name} />
        <fieldset>
          <legend>GPU capacity</legend>
          {inputs.map((i) => (
            <Field
              key={i.field}
              name={i.field}
              label={i.label}
              hint={i.hint}
              required={i.required}
              value={v[i.field] ?? ''}
              onInput={set(i.field)}
              errors={errors.byField[i.field]}
              inputMode={i.kind === 'count' ? 'numeric' : undefined}
              options={i.kind === 'profile' ? MIG_PROFILES.map((p) => ({ value: p, label: p })) : undefined}
            />
          ))}
        </fieldset>
        <fieldset>
          <legend>Workload limits (empty: none)</legend>
          {WORKLOAD_FIELDS.map((f) => (
            <Field key={f} name={f} label={WORKLOAD_LABELS[f]} value={v[f] ?? ''} onInput={set(f)} errors={errors.byField[f]} inputMode="numeric" />
          ))}
        </fieldset>
        {failure ? (
          <div class="error-box" role="alert" data-form-error>
            <p>{editing ? 'The resize was refused' : 'The virtual cluster was not created'}: {failure instanceof Error ? failure.message : String(failure)}</p>
            {errors.unplaced.length ? (
              <ul>
                {errors.unplaced.map((x) => <li key={x.field}>{x.field}: {x.description}</li>)}
              </ul>
            ) : null}
          </div>
        ) : null}
        <button type="submit" class="btn btn--primary" disabled={busy}>
          {editing ? 'Resize' : 'Create'}
        </button>{' '}
        <a class="btn" href={editing ? paths.vcluster(tenant, editing) : paths.vclusters(tenant)}>Cancel</a>
      </form>
    </section>
  );
}

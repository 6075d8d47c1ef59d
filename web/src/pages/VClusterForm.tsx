import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { ApiError, NETWORK_STATUS, NO_ERRORS, fieldErrors, type FieldErrors } from '../api/problem';
import { getFreeCapacity, getTenant, getTier } from '../api/queries';
import type { VirtualCluster } from '../api/types';
import { useAsync, usePoll, useTitle } from '../lib/hooks';
import { navigate } from '../lib/router';
import { paths } from '../lib/routes';
import { capacityKindOf, type CapacityKind } from '../lib/quota';
import { MIG_PROFILES, WORKLOAD_FIELDS, addMigRow, capacityBody, capacityInputs, formValuesOf, migField, migRowCount, quotaAliases, removeMigRow, type FormValues } from '../lib/capacity';
import { freeHints } from '../lib/free';
import { describeReservation } from '../lib/vclusters';
import { Field, idOf } from '../components/Field';
import { MigRows } from '../components/MigRows';
import { ErrorBox } from '../components/ErrorBox';
import { Loading } from '../components/Loading';

const WORKLOAD_LABELS: Record<(typeof WORKLOAD_FIELDS)[number], string> = {
  'quota.cpu_milli': 'CPU limit (millicores)',
  'quota.memory_mib': 'Memory limit (MiB)',
  'quota.pods': 'Pods limit',
};
/** The live check runs this long after the last keystroke. */
const CHECK_DELAY_MS = 400;
/** Stands in for a name not typed yet, so that the capacity can be checked first. */
const UNNAMED = 'unnamed-check';
/** What is free changes with other tenants' requests; re-read this often while the form is open. */
const FREE_POLL_MS = 10000;

function int(v: string | undefined): number {
  return v && v.trim() ? Number(v.trim()) : 0;
}

function requestBody(kind: CapacityKind, v: FormValues): VirtualCluster {
  return {
    display_name: (v.display_name ?? '').trim(),
    capacity: capacityBody(kind, v),
    quota: { cpu_milli: int(v['quota.cpu_milli']), memory_mib: int(v['quota.memory_mib']), pods: int(v['quota.pods']) },
  };
}

/**
 * Create a virtual cluster, or resize one (route …/:name/edit): only the
 * capacity kind the tier holds is offered. While the user types, the request
 * is checked with the server (validate_only: every rule of the real call,
 * quota and placement included, nothing kept), so a refusal shows beside its
 * field before submitting and a request that fits says where it would go.
 */
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
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [failure, setFailure] = useState<unknown>(null);
  const [check, setCheck] = useState('');
  const [busy, setBusy] = useState(false);
  const checkSeq = useRef(0);
  // The field to focus after the next render: the row a button added, or the one that took a removed row's place.
  const [focusField, setFocusField] = useState<string | null>(null);
  // Without the summary the form still works (the live check is exact), so a failed read only leaves the hints out.
  const free = usePoll(() => getFreeCapacity(tenant), [tenant], () => FREE_POLL_MS);

  const kind = ctx.data ? capacityKindOf(ctx.data.tier.gpu_sharing) : null;
  const v: FormValues = values ?? (ctx.data?.vc ? formValuesOf(ctx.data.vc) : { [migField(0, 'profile')]: MIG_PROFILES[3]! });
  const inputs = kind ? capacityInputs(kind, v) : [];
  const hints = kind && free.data ? freeHints(kind, free.data, v) : {};
  const formFields = ['name', 'display_name', ...inputs.map((i) => i.field), ...WORKLOAD_FIELDS];

  // A layout effect: focus moves in the same frame as the row appears or goes, so
  // a key pressed right after cannot land on the element focused before.
  useLayoutEffect(() => {
    if (!focusField) return;
    document.getElementById(idOf(focusField))?.focus();
    setFocusField(null);
  }, [focusField]);

  /** The create or resize call; `validateOnly` checks it without keeping anything. */
  const send = (validateOnly: boolean) => {
    const body = requestBody(kind!, v);
    if (editing) {
      return call(
        api.PATCH('/v1/tenants/{tenant}/vclusters/{name}', {
          params: {
            path: { tenant, name: editing },
            query: { update_mask: 'display_name,capacity,quota', ...(validateOnly ? { validate_only: true } : {}) },
            header: { 'If-Match': ctx.data!.vc?.etag ?? '*' },
          },
          body,
        }),
      );
    }
    const name = (v.name ?? '').trim();
    return call(
      api.POST('/v1/tenants/{tenant}/vclusters', {
        params: { path: { tenant }, query: validateOnly ? { validate_only: true } : {} },
        body: { ...body, name: validateOnly && !name ? UNNAMED : name },
      }),
    );
  };

  // The live check, after each change the user makes (not on first render).
  useEffect(() => {
    if (!values || !kind) return;
    const seq = ++checkSeq.current;
    let timer = 0;
    const run = () => {
      send(true).then(
        (vc) => {
          if (seq !== checkSeq.current) return;
          setErrors(NO_ERRORS);
          setCheck(`Fits now: would reserve ${describeReservation(vc.reservation)}.`);
        },
        (err: unknown) => {
          if (seq !== checkSeq.current || !(err instanceof ApiError) || err.status === NETWORK_STATUS) return;
          // 409: septad runs one check per tenant at a time and an earlier one is still under way.
          if (err.status === 409) {
            timer = window.setTimeout(run, CHECK_DELAY_MS);
            return;
          }
          const fe = fieldErrors(err.violations, formFields, quotaAliases(kind));
          setErrors(fe);
          setCheck(Object.keys(fe.byField).length ? 'Does not fit as it is: see the fields marked.' : `Cannot be done as it is: ${err.message}`);
        },
      );
    };
    timer = window.setTimeout(run, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [values]);

  const h1 = editing ? `Resize ${editing}` : 'New virtual cluster';
  if (!ctx.data) {
    return <Loading id="vcf-h" title={h1} error={ctx.error} />;
  }
  if (!kind) return <ErrorBox error={new Error(`The trust tier ${ctx.data.tier.name} has no GPU sharing mode this form knows.`)} />;
  const set = (field: string) => (value: string) => setValues({ ...v, [field]: value });
  // Errors name rows by index, which adding or removing a row changes: drop them until the next check.
  const addRow = () => {
    const used = new Set(Array.from({ length: migRowCount(v) }, (_, i) => v[migField(i, 'profile')]));
    setValues(addMigRow(v, MIG_PROFILES.find((x) => !used.has(x)) ?? MIG_PROFILES[0]!));
    setErrors(NO_ERRORS);
    setFocusField(migField(migRowCount(v), 'profile'));
  };
  const removeRow = (row: number) => {
    const next = removeMigRow(v, row);
    setValues(next);
    setErrors(NO_ERRORS);
    setFocusField(migField(Math.min(row, migRowCount(next) - 1), 'profile'));
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    checkSeq.current += 1; // a live check still under way must not overwrite this answer
    setBusy(true);
    setFailure(null);
    setErrors(NO_ERRORS);
    try {
      await send(false);
      navigate(paths.vcluster(tenant, editing ?? (v.name ?? '').trim()));
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
        <fieldset class={kind === 'mig' ? 'capacity--mig' : undefined}>
          <legend>GPU capacity</legend>
          <p class="hint">Beside the inputs: what is free for the tier now, a summary of the current layouts; the check under the form answers for this request exactly.</p>
          {kind === 'mig' ? (
            <MigRows values={v} onInput={set} errors={errors.byField} free={hints} onAdd={addRow} onRemove={removeRow} />
          ) : (
            inputs.map((i) => (
              <Field
                key={i.field}
                name={i.field}
                label={i.label}
                hint={i.hint}
                free={hints[i.field]}
                required={i.required}
                value={v[i.field] ?? ''}
                onInput={set(i.field)}
                errors={errors.byField[i.field]}
                inputMode={i.kind === 'count' ? 'numeric' : undefined}
              />
            ))
          )}
        </fieldset>
        <fieldset>
          <legend>Workload limits (empty: none)</legend>
          {WORKLOAD_FIELDS.map((f) => (
            <Field key={f} name={f} label={WORKLOAD_LABELS[f]} value={v[f] ?? ''} onInput={set(f)} errors={errors.byField[f]} inputMode="numeric" />
          ))}
        </fieldset>
        <p class="hint" role="status" data-check>
          {check}
        </p>
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

import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { ApiError, NO_ERRORS, fieldErrors, type FieldErrors } from '../api/problem';
import type { TenantMember } from '../api/types';
import { useAsync, useTitle } from '../lib/hooks';
import { formatTime } from '../lib/quantity';
import { MEMBER_KINDS, MEMBER_ROLES, memberText, nameProblem, viaOf } from '../lib/members';
import { loadSession } from '../lib/session';
import { mayManage } from '../lib/tenancy';
import { Field } from '../components/Field';
import { ErrorBox, FormErrors } from '../components/ErrorBox';
import { ConfirmDelete } from '../components/ConfirmDelete';
import { Loading } from '../components/Loading';
import { THead } from '../components/Table';

function AddMember({ tenant, onAdded }: { tenant: string; onAdded: () => void }) {
  const [v, setV] = useState({ kind: 'user', member: '', role: 'viewer' });
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof v) => (value: string) => setV({ ...v, [k]: value });

  const add = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    const problem = nameProblem(v.member);
    if (problem) {
      setErrors({ byField: { member: [problem] }, unplaced: [] });
      return;
    }
    setErrors(NO_ERRORS);
    setBusy(true);
    try {
      await call(api.POST('/v1/tenants/{tenant}/members', { params: { path: { tenant } }, body: { member: memberText(v.kind, v.member), role: v.role } }));
      setV({ ...v, member: '' });
      onAdded();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, ['member', 'role']));
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={add} class="card" aria-labelledby="mem-new-h" noValidate>
      <h2 id="mem-new-h">Add a member</h2>
      <Field name="kind" label="Kind" value={v.kind} onInput={set('kind')} options={MEMBER_KINDS} />
      <Field
        name="member"
        label={v.kind === 'group' ? 'Group name' : 'User name'}
        value={v.member}
        onInput={set('member')}
        errors={errors.byField.member}
        required
        hint={v.kind === 'group' ? 'Exactly as the identity provider’s groups claim gives it (case and spaces matter).' : 'Exactly as the identity provider’s username claim gives it, e.g. an email address.'}
      />
      <Field name="role" label="Role" value={v.role} onInput={set('role')} errors={errors.byField.role} options={MEMBER_ROLES} />
      <FormErrors errors={errors} failure={failure} context="Not added" />
      <button type="submit" class="btn btn--primary" disabled={busy}>Add member</button>
    </form>
  );
}

/** An owner's controls of one member: its role, and removing it (typed confirmation). */
function MemberActions({ tenant, m, onChange }: { tenant: string; m: TenantMember; onChange: () => void }) {
  const member = m.member!;
  const [role, setRole] = useState(m.role ?? 'viewer');
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [failure, setFailure] = useState<unknown>(null);
  const [removing, setRemoving] = useState(false);
  const ifMatch = { 'If-Match': m.etag ?? '*' };

  const save = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    setErrors(NO_ERRORS);
    try {
      await call(api.PATCH('/v1/tenants/{tenant}/members/{member}', { params: { path: { tenant, member }, header: ifMatch }, body: { role } }));
      onChange();
    } catch (err) {
      if (err instanceof ApiError) setErrors(fieldErrors(err.violations, ['role']));
      setFailure(err);
    }
  };

  return (
    <td>
      <form class="inline-form" onSubmit={save} aria-label={`Role of ${member}`} noValidate>
        <Field idScope={`role-of-${member}`} name="role" label="Role" value={role} onInput={setRole} errors={errors.byField.role} options={MEMBER_ROLES} />
        <button type="submit" class="btn">Save role<span class="visually-hidden"> of {member}</span></button>
      </form>
      <FormErrors errors={errors} failure={failure} context="Role not changed" />
      <button type="button" class="btn" aria-expanded={removing} onClick={() => setRemoving(!removing)}>Remove…<span class="visually-hidden"> {member}</span></button>
      {removing ? (
        <ConfirmDelete
          name={member}
          what={`member ${member}`}
          onDelete={async () => {
            await call(api.DELETE('/v1/tenants/{tenant}/members/{member}', { params: { path: { tenant, member }, header: ifMatch } }));
            onChange();
          }}
        />
      ) : null}
    </td>
  );
}

/** A tenant's members: everyone who may see the tenant reads them; its owners add, change and remove them. */
export function Members({ params, session, caller }: PageProps) {
  const tenant = params.tenant!;
  useTitle(`Members of ${tenant}`);
  const members = useAsync(async () => (await call(api.GET('/v1/tenants/{tenant}/members', { params: { path: { tenant } } }))).members ?? [], [tenant]);
  const owner = mayManage(session.role);
  const via = viaOf(caller, tenant);
  // A change to a member that gives the person its own role changes what
  // it may do here: read its memberships again (header, switcher, controls).
  const changed = (member: string) => {
    members.reload();
    if (via.includes(member)) void loadSession();
  };

  if (!members.data) return <Loading id="mem-h" title={`Members of ${tenant}`} error={members.error} />;
  return (
    <section aria-labelledby="mem-h" data-loaded="members">
      <h1 id="mem-h">Members of {tenant}</h1>
      <p class="lead">
        People sign in with their identity provider and act here with the strongest role of their own membership (user) and their groups’ (group).
      </p>
      {owner ? <AddMember tenant={tenant} onAdded={members.reload} /> : <p>Only the tenant’s owners add, change or remove members.</p>}
      <ErrorBox error={members.error} />
      {members.data.length ? (
        <table class="list">
          <THead cols={owner ? ['Member', 'Role', 'Added', 'Change'] : ['Member', 'Role', 'Added']} />
          <tbody>
            {members.data.map((m) => (
              <tr key={m.member} data-member={m.member}>
                <th scope="row">
                  {m.member}
                  {via.includes(m.member!) ? <span class="hint"> (gives you your role)</span> : null}
                </th>
                <td data-role>{m.role}</td>
                <td>{formatTime(m.create_time)}</td>
                {owner ? <MemberActions key={m.etag} tenant={tenant} m={m} onChange={() => changed(m.member!)} /> : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No members yet: only API tokens act in this tenant.</p>
      )}
    </section>
  );
}

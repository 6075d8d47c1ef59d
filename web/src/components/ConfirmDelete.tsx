import { useState } from 'preact/hooks';
import { ApiError } from '../api/problem';
import { ErrorBox } from './ErrorBox';

/** Deleting needs the resource's name typed: a keyboard-friendly confirmation with no dialog. */
export function ConfirmDelete({ name, what, onDelete }: { name: string; what: string; onDelete: () => Promise<void> }) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const id = `confirm-${what.replace(/\W+/g, '-')}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (typed !== name) {
      setError(new ApiError(400, 'INVALID_ARGUMENT', `Type “${name}” to confirm.`));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onDelete();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="danger" onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>Delete {what}</h3>
      <div class="field">
        <label for={id}>Type the name, {name}, to confirm</label>
        <input id={id} name="confirm" autoComplete="off" value={typed} onInput={(e) => setTyped((e.target as HTMLInputElement).value)} />
      </div>
      <ErrorBox error={error} />
      <button type="submit" class="btn btn--danger" disabled={busy}>
        Delete {what}
      </button>
    </form>
  );
}

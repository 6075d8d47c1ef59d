import { MIG_PROFILES, migRowCount, migRowInputs, type FormValues } from '../lib/capacity';
import { Field } from './Field';

interface MigRowsProps {
  values: FormValues;
  onInput: (field: string) => (value: string) => void;
  errors: Record<string, string[]>;
  /** what is free beside each input, by field (lib/free.ts) */
  free: Record<string, string>;
  onAdd: () => void;
  onRemove: (row: number) => void;
}

/**
 * The MIG request's rows ({profile, count, model} each), one fieldset per row
 * so that a screen reader announces which row an input belongs to. Rows are
 * added and removed with plain buttons (keyboard and pointer alike); the last
 * row cannot be removed, since a MIG request has at least one.
 */
export function MigRows(p: MigRowsProps) {
  const rows = migRowCount(p.values);
  return (
    <>
      {Array.from({ length: rows }, (_, row) => (
        <fieldset key={row} class="mig-row" data-mig-row={row}>
          <legend>MIG row {row + 1}</legend>
          {migRowInputs(row).map((i) => (
            <Field
              key={i.field}
              name={i.field}
              label={i.label}
              hint={i.hint}
              free={p.free[i.field]}
              required={i.required}
              value={p.values[i.field] ?? ''}
              onInput={p.onInput(i.field)}
              errors={p.errors[i.field]}
              inputMode={i.kind === 'count' ? 'numeric' : undefined}
              options={i.kind === 'profile' ? MIG_PROFILES.map((x) => ({ value: x, label: x })) : undefined}
            />
          ))}
          {rows > 1 ? (
            <button type="button" class="btn" onClick={() => p.onRemove(row)}>
              Remove row {row + 1}
            </button>
          ) : null}
        </fieldset>
      ))}
      <button type="button" class="btn" onClick={p.onAdd}>
        Add a MIG row
      </button>
    </>
  );
}

import type { ComponentChildren } from 'preact';

interface FieldProps {
  /** the request field; also the input's name and the key of its errors */
  name: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  errors?: string[] | undefined;
  hint?: string | undefined;
  /** what is free of this input's kind now (lib/free.ts); announced with the input like the hint */
  free?: string | undefined;
  type?: 'text' | 'password';
  required?: boolean;
  autoComplete?: string;
  /** a <select>'s options instead of an <input> */
  options?: { value: string; label: string }[];
  inputMode?: 'numeric' | 'text';
  /** distinguishes the ids of the same field in several forms on one page */
  idScope?: string;
  children?: ComponentChildren;
}

/** The input's id: also how a page moves focus to it. */
export function idOf(name: string, scope = ''): string {
  return `f-${`${scope}${scope ? '-' : ''}${name}`.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

/** A labelled input whose server errors sit beside it and are announced with it. */
export function Field(p: FieldProps) {
  const id = idOf(p.name, p.idScope);
  const errors = p.errors ?? [];
  const describedBy = [p.hint ? `${id}-hint` : '', p.free ? `${id}-free` : '', errors.length ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: p.name,
    'aria-invalid': errors.length ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
    required: p.required,
  };
  return (
    <div class={errors.length ? 'field field--error' : 'field'}>
      <label for={id}>
        {p.label}
        {p.required ? ' (required)' : null}
      </label>
      {p.options ? (
        <select {...common} value={p.value} onChange={(e) => p.onInput((e.target as HTMLSelectElement).value)}>
          {p.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      ) : (
        <input
          {...common}
          type={(p.type ?? 'text') as 'text'}
          inputMode={p.inputMode}
          autoComplete={p.autoComplete ?? 'off'}
          value={p.value}
          onInput={(e) => p.onInput((e.target as HTMLInputElement).value)}
        />
      )}
      {p.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      ) : null}
      {p.free ? (
        <p class="hint" id={`${id}-free`} data-free={p.name}>
          {p.free}
        </p>
      ) : null}
      {errors.length ? (
        <p class="field-error" id={`${id}-err`} data-field-error={p.name}>
          {errors.join(' ')}
        </p>
      ) : null}
      {p.children}
    </div>
  );
}

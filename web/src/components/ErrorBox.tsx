import { ApiError, type FieldErrors } from '../api/problem';

/** Why an action failed, for a form's summary or a page (role=alert: announced). */
export function ErrorBox({ error, context }: { error: unknown; context?: string }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const notFound = error instanceof ApiError && error.status === 404;
  return (
    <div class="error-box" role="alert">
      <p>
        {context ? `${context}: ` : ''}
        {notFound ? 'Not found. ' : ''}
        {text}
      </p>
      {error instanceof ApiError && error.requestId ? <p class="hint">Request id {error.requestId}</p> : null}
    </div>
  );
}

/**
 * A form's summary of a failed request: the violations no field of the form
 * takes, or, when no field shows an error, the failure itself.
 */
export function FormErrors({ errors, failure, context }: { errors: FieldErrors; failure: unknown; context: string }) {
  if (errors.unplaced.length) return <ErrorBox error={new Error(errors.unplaced.map((v) => `${v.field}: ${v.description}`).join('; '))} context={context} />;
  return failure && !Object.keys(errors.byField).length ? <ErrorBox error={failure} context={context} /> : null;
}

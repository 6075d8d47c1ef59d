import { ApiError } from '../api/problem';

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

// problem+json (RFC 9457) as septad writes it, turned into one error type the
// pages can show: a message for the form and descriptions per request field.

export interface Violation {
  field: string;
  description: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly violations: Violation[] = [],
    readonly requestId = '',
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** status 0: the request never got an answer (network down, server gone). */
export const NETWORK_STATUS = 0;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds an ApiError from whatever body an error response had. */
export function problemFrom(status: number, body: unknown, statusText = ''): ApiError {
  if (!isRecord(body)) {
    const text = typeof body === 'string' && body.trim() ? body.trim() : statusText || `HTTP ${status}`;
    return new ApiError(status, '', text);
  }
  const violations: Violation[] = Array.isArray(body.violations)
    ? body.violations.filter(isRecord).map((v) => ({
        field: String(v.field ?? ''),
        description: String(v.description ?? ''),
      }))
    : [];
  const message =
    typeof body.message === 'string' && body.message
      ? body.message
      : typeof body.title === 'string'
        ? body.title
        : `HTTP ${status}`;
  return new ApiError(
    typeof body.status === 'number' ? body.status : status,
    typeof body.code === 'string' ? body.code : '',
    message,
    violations,
    typeof body.request_id === 'string' ? body.request_id : '',
  );
}

export interface FieldErrors {
  /** descriptions per form field name */
  byField: Record<string, string[]>;
  /** violations no field of the form takes: shown in the form's summary */
  unplaced: Violation[];
}

export const NO_ERRORS: FieldErrors = { byField: {}, unplaced: [] };

function covers(formField: string, violationField: string): boolean {
  if (violationField === formField) return true;
  const next = violationField.charAt(formField.length);
  return violationField.startsWith(formField) && (next === '.' || next === '[');
}

/**
 * Places each violation beside the form field it names: the field itself or
 * the longest form field that contains it (capacity.mig[0] for
 * capacity.mig[0].count when only the row has an input). `aliases` maps
 * server fields that are not request fields (tenant.quota.gpu_milli) to the
 * input that asked for the quantity.
 */
export function fieldErrors(
  violations: Violation[],
  formFields: string[],
  aliases: Record<string, string> = {},
): FieldErrors {
  const byField: Record<string, string[]> = {};
  const unplaced: Violation[] = [];
  for (const v of violations) {
    const name = aliases[v.field] ?? v.field;
    let best = '';
    for (const f of formFields) if (covers(f, name) && f.length > best.length) best = f;
    // A violation on a parent (capacity.mig) goes to the first input under it.
    if (!best) best = formFields.find((f) => covers(name, f)) ?? '';
    if (best) (byField[best] ??= []).push(v.description);
    else unplaced.push(v);
  }
  return { byField, unplaced };
}

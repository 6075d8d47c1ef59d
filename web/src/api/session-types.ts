// The /v1/sessions routes are not in api/openapi.yaml yet; their shape is
// typed here by hand from the server contract. When the generated schema has
// them, replace the interface by:
//   export type Session = components['schemas']['Session'];
export interface Session {
  /** "admin" or "tenant:<name>" */
  principal: string;
  /** the tenant's name; empty for admin */
  tenant: string;
  /** "owner" or "viewer" */
  role: string;
  expire_time: string;
  /** sent back as X-Septa-CSRF on unsafe requests; kept in memory only */
  csrf_token: string;
}

export type SignInRequest = { token: string } | { sign_in_code: string };

// A tenant's members (docs/identity.md "Members"): "user:<name>" or
// "group:<name>", the name exactly as the identity provider's claim gives
// it, with a role. septad judges every request; the form checks the same
// rules first so that a slip shows beside the input before sending.
import type { Caller } from '../api/session-types';

export const MEMBER_KINDS = [
  { value: 'user', label: 'User' },
  { value: 'group', label: 'Group' },
];

export const MEMBER_ROLES = [
  { value: 'viewer', label: 'viewer (reads)' },
  { value: 'editor', label: 'editor (writes resources)' },
  { value: 'owner', label: 'owner (and manages members, tokens)' },
];

/** The longest name septad takes, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 256;

// Control characters (C0, DEL, C1) and bidi formatting characters (which
// can make one name read as another): septad refuses both.
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** The member's text in the API: kind and name, as typed (case and spaces matter). */
export function memberText(kind: string, name: string): string {
  return `${kind}:${name}`;
}

/** Why a name cannot be a member's, or null when septad would take it. */
export function nameProblem(name: string): string | null {
  if (!name) return 'Enter the name as the identity provider’s claim gives it.';
  if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) return `At most ${MAX_NAME_BYTES} bytes.`;
  if (FORBIDDEN.test(name)) return 'One line of printable text: no control or bidi formatting characters.';
  return null;
}

/** The members that give the signed-in person its role in `tenant` (empty for a token). */
export function viaOf(caller: Caller | undefined, tenant: string): string[] {
  return caller?.memberships?.find((m) => m.tenant === tenant)?.via ?? [];
}

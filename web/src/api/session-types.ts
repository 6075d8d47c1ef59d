// The portal's session routes (/v1/sessions), from the generated schema.
import type { components } from './schema';

export type Session = components['schemas']['Session'];
export type SignInRequest = components['schemas']['SignIn'];

// The portal's session routes (/v1/sessions) and who a session is (/v1/caller), from the generated schema.
import type { components } from './schema';

type S = components['schemas'];
export type Session = S['Session'];
export type SignInRequest = S['SignIn'];
export type Caller = S['CallerIdentity'];

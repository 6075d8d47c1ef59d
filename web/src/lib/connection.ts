// Whether the last request failed for want of a connection; drives the banner.
import { createStore } from './store';

export const connectionLost = createStore(false);

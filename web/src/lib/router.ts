// History API routing: one store holding the current path and query.
import { createStore, useStore } from './store';

export interface Location {
  path: string;
  query: URLSearchParams;
}

function read(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

const locationStore = createStore<Location>(read());

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  locationStore.set(read());
}

/** The current path with its query, to come back to after signing in. */
export function currentPath(): string {
  return window.location.pathname + window.location.search;
}

export function useLocation(): Location {
  return useStore(locationStore);
}

export function startRouter(): void {
  window.addEventListener('popstate', () => locationStore.set(read()));
  // Same-origin links navigate in the app; modified clicks, downloads and
  // new-tab targets keep the browser's behaviour.
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download') || !a.href) return;
    const url = new URL(a.href);
    if (url.origin !== window.location.origin || url.pathname.startsWith('/v1/')) return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}

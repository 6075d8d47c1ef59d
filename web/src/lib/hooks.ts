// Loading data in components: once (useAsync) or repeatedly (usePoll).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change and again every `intervalMs(data)` ms while
 * the page is visible (0: never). The browser revalidates each fetch by the
 * weak ETag septad sends with its lists (`private, no-cache`), so a poll of
 * an unchanged list is a 304 without its body (web/README.md).
 */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[], intervalMs: (data: T | undefined) => number = () => 0): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const intervalRef = useRef(intervalMs);
  intervalRef.current = intervalMs;
  const depsKey = JSON.stringify(deps);
  const lastKey = useRef(depsKey);

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // New deps (another page or tenant): forget the old data.
    if (lastKey.current !== depsKey) {
      lastKey.current = depsKey;
      setState({ data: undefined, error: undefined, loading: true });
    }
    const schedule = (data: T | undefined) => {
      const ms = intervalRef.current(data);
      if (ms > 0) timer = setTimeout(run, ms);
    };
    const run = () => {
      if (document.visibilityState === 'hidden') {
        document.addEventListener('visibilitychange', run, { once: true });
        return;
      }
      loadRef.current().then(
        (data) => {
          if (!live) return;
          setState({ data, error: undefined, loading: false });
          schedule(data);
        },
        (error: unknown) => {
          if (!live) return;
          setState((s) => ({ data: s.data, error, loading: false }));
          schedule(undefined);
        },
      );
    };
    run();
    return () => {
      live = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', run);
    };
  }, [depsKey, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  return usePoll(load, deps);
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Septa`;
  }, [title]);
}

// Performance marks the e2e suite reads (performance.getEntriesByName) to
// time pages from navigation start; each is set once per page load.
const done = new Set<string>();

export function markOnce(name: string): void {
  if (done.has(name)) return;
  done.add(name);
  performance.mark(name);
}

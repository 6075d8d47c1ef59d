import { useEffect, useState } from 'preact/hooks';
import { markOnce } from '../../lib/perf';
import type { PageProps } from '../../app';
import { listNodes } from '../../api/queries';
import type { Holder, InventoryGpu, InventoryNode } from '../../api/types';
import { useAsync, useTitle } from '../../lib/hooks';
import { freeCapacity } from '../../lib/quota';
import { formatCpuMilli, formatGpuMilli, formatMiB } from '../../lib/quantity';
import { ErrorBox } from '../../components/ErrorBox';

function holderText(h: Holder | undefined): string {
  return h ? `${h.tenant}/${h.vcluster}${h.releasing ? ' (releasing)' : ''}` : '';
}

function gpuUse(node: InventoryNode, g: InventoryGpu): string {
  if (node.holder) return `node held by ${holderText(node.holder)}`;
  if (g.holder) return `held whole by ${holderText(g.holder)}`;
  if (g.mig_enabled) {
    const mig = g.mig_instances ?? [];
    return mig.map((m) => `${m.profile}${m.holder ? ` → ${holderText(m.holder)}` : ' free'}`).join('; ') || 'MIG, no instances';
  }
  const shares = g.shares ?? [];
  return shares.length ? shares.map((s) => `${formatGpuMilli(s.milli_gpu)} → ${holderText(s.holder)}`).join('; ') : 'free';
}

/** Every GPU of the host cluster, one row each (1,000 rows render in one pass). */
export function Inventory(_: PageProps) {
  useTitle('GPU inventory');
  const nodes = useAsync(async () => {
    const all = await listNodes();
    markOnce('septa:inventory-fetched');
    return all;
  }, []);
  const [text, setText] = useState('');
  useEffect(() => {
    if (nodes.data) markOnce('septa:inventory-rendered');
  }, [nodes.data]);
  if (!nodes.data) {
    return (
      <section aria-labelledby="inv-h">
        <h1 id="inv-h">GPU inventory</h1>
        {nodes.error ? <ErrorBox error={nodes.error} /> : <p aria-busy="true">Loading…</p>}
      </section>
    );
  }
  const free = freeCapacity(nodes.data);
  const needle = text.trim().toLowerCase();
  const shown = needle ? nodes.data.filter((n) => (n.name ?? '').toLowerCase().includes(needle) || (n.gpus ?? []).some((g) => (g.model ?? '').toLowerCase().includes(needle))) : nodes.data;
  const gpuCount = nodes.data.reduce((s, n) => s + (n.gpus ?? []).length, 0);
  return (
    <section aria-labelledby="inv-h" data-loaded="inventory" data-gpus={gpuCount}>
      <h1 id="inv-h">GPU inventory</h1>
      <p class="lead">
        {nodes.data.length} nodes, {gpuCount} GPUs. Free now: {formatGpuMilli(free.sharedMilli)} GPU for shares, {free.wholeGpus} whole GPUs, {free.nodes} whole nodes,{' '}
        MIG {Object.entries(free.migByProfile).sort().map(([p, n]) => `${n}× ${p}`).join(', ') || 'none'}.
      </p>
      <form role="search" class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="inv-filter">Filter by node or model</label>
          <input id="inv-filter" type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </div>
      </form>
      <table class="list">
        <thead>
          <tr><th scope="col">Node</th><th scope="col">Health</th><th scope="col">CPU / memory</th><th scope="col">GPU</th><th scope="col">Model</th><th scope="col">Use</th></tr>
        </thead>
        <tbody>
          {shown.flatMap((n) => {
            const gpus = n.gpus ?? [];
            const head = (
              <>
                <th scope="row">{n.name}{n.layout_settled === false ? <span class="hint"> (MIG re-layout)</span> : null}</th>
                <td>{n.health}</td>
                <td>{formatCpuMilli(n.cpu_milli)} CPU / {formatMiB(n.memory_mib)}</td>
              </>
            );
            if (gpus.length === 0) return [<tr key={n.name}>{head}<td>—</td><td>—</td><td>{n.holder ? `held by ${holderText(n.holder)}` : 'no GPUs'}</td></tr>];
            return gpus.map((g) => (
              <tr key={`${n.name}/${g.index}`} data-gpu>
                {head}
                <td>{g.index}</td>
                <td>{g.model}</td>
                <td>{gpuUse(n, g)}</td>
              </tr>
            ));
          })}
        </tbody>
      </table>
    </section>
  );
}

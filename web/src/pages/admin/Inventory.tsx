import { useEffect, useState } from 'preact/hooks';
import { markOnce } from '../../lib/perf';
import type { PageProps } from '../../app';
import { getInventoryFreeCapacity, listNodes } from '../../api/queries';
import type { FreeCapacity, Holder, InventoryGpu, InventoryNode } from '../../api/types';
import { useAsync, useTitle } from '../../lib/hooks';
import { capacityKindOf, type CapacityKind } from '../../lib/quota';
import { formatCpuMilli, formatGpuMilli, formatMiB } from '../../lib/quantity';
import { FreeTable } from '../../components/FreeTable';
import { THead } from '../../components/Table';
import { Loading } from '../../components/Loading';

const KIND_TITLES: Record<CapacityKind, string> = { shared: 'GPU shares', mig: 'MIG instances', gpus: 'Whole GPUs', nodes: 'Whole nodes' };

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

/** What is free for each kind of GPU sharing, as septad counts it for a tenant of a tier of that kind. */
function FreeByKind({ bySharing }: { bySharing: FreeCapacity[] }) {
  return (
    <section aria-labelledby="inv-free-h">
      <h2 id="inv-free-h">Free now, by kind of GPU sharing</h2>
      <div class="grid">
        {bySharing.map((free) => {
          const kind = capacityKindOf(free.gpu_sharing);
          if (!kind) return null;
          const id = `inv-free-${kind}`;
          return (
            <section key={kind} aria-labelledby={id} class="card">
              <h3 id={id}>{KIND_TITLES[kind]} ({free.gpu_sharing})</h3>
              <FreeTable kind={kind} free={free} labelledBy={id} />
            </section>
          );
        })}
      </div>
    </section>
  );
}

/** Every GPU of the host cluster, one row each (1,000 rows render in one pass). */
export function Inventory(_: PageProps) {
  useTitle('GPU inventory');
  const inv = useAsync(async () => {
    const [nodes, free] = await Promise.all([listNodes(), getInventoryFreeCapacity()]);
    markOnce('septa:inventory-fetched');
    return { nodes, free: free.by_sharing ?? [] };
  }, []);
  const [text, setText] = useState('');
  useEffect(() => {
    if (inv.data) markOnce('septa:inventory-rendered');
  }, [inv.data]);
  if (!inv.data) {
    return <Loading id="inv-h" title="GPU inventory" error={inv.error} />;
  }
  const { nodes, free } = inv.data;
  const needle = text.trim().toLowerCase();
  const shown = needle ? nodes.filter((n) => (n.name ?? '').toLowerCase().includes(needle) || (n.gpus ?? []).some((g) => (g.model ?? '').toLowerCase().includes(needle))) : nodes;
  const gpuCount = nodes.reduce((s, n) => s + (n.gpus ?? []).length, 0);
  return (
    <section aria-labelledby="inv-h" data-loaded="inventory" data-gpus={gpuCount}>
      <h1 id="inv-h">GPU inventory</h1>
      <p class="lead">
        {nodes.length} nodes, {gpuCount} GPUs.
      </p>
      <FreeByKind bySharing={free} />
      <form role="search" class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="inv-filter">Filter by node or model</label>
          <input id="inv-filter" type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </div>
      </form>
      <table class="list">
        <THead cols={['Node', 'Health', 'CPU / memory', 'GPU', 'Model', 'Use']} />
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

// What is free for a tenant's tier now (GET /v1/tenants/{tenant}/free-capacity),
// as text for the Overview and beside the create/resize form's inputs. The
// server computes the figures; this only selects and words them.
import type { FreeCapacity } from '../api/types';
import type { CapacityKind } from './quota';
import { migField, migRowCount, type FormValues } from './capacity';
import { formatGpuMilli, toInt } from './quantity';

type Count = NonNullable<FreeCapacity['mig']>[number];

export interface FreeRow {
  /** stable key: model, or model/profile */
  key: string;
  label: string;
  value: string;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A model typed in the form matches the server's name case-insensitively; empty matches any. */
function sameModel(typed: string, model: string | undefined): boolean {
  return !typed || typed.toLowerCase() === (model ?? '').toLowerCase();
}

function sum(counts: Count[]): number {
  return counts.reduce((s, c) => s + (c.count ?? 0), 0);
}

/** "A100-80GB 16, T4 8" */
function byModel(counts: Count[]): string {
  return counts.map((c) => `${c.model} ${c.count ?? 0}`).join(', ');
}

/** One row per model (and profile) of the tier's kind; a single "none" row when nothing is free. */
export function freeRows(kind: CapacityKind, free: FreeCapacity): FreeRow[] {
  let rows: FreeRow[];
  switch (kind) {
    case 'shared':
      rows = (free.shared ?? []).map((s) => ({
        key: s.model ?? '',
        label: `GPU time on ${s.model}`,
        value:
          `${formatGpuMilli(s.milli_gpu)} GPU on ${plural(s.gpus ?? 0, 'GPU')}, at most ${formatGpuMilli(s.largest_milli_gpu)} on one; ` +
          `${toInt(s.gpu_memory_mib)} MiB GPU memory, at most ${s.largest_gpu_memory_mib ?? 0} MiB on one`,
      }));
      break;
    case 'mig':
      rows = (free.mig ?? []).map((m) => ({ key: `${m.model}/${m.profile}`, label: `MIG ${m.profile} on ${m.model}`, value: plural(m.count ?? 0, 'instance') }));
      break;
    case 'gpus':
      rows = (free.gpus ?? []).map((g) => ({ key: g.model ?? '', label: `Whole ${g.model} GPUs`, value: String(g.count ?? 0) }));
      break;
    case 'nodes':
      rows = (free.nodes ?? []).map((n) => ({ key: n.model ?? '', label: `Whole ${n.model} nodes`, value: String(n.count ?? 0) }));
      break;
  }
  return rows.length ? rows : [{ key: '', label: 'Free', value: 'nothing' }];
}

/**
 * What is free beside each capacity input of the form, by the field's name:
 * counts follow the model (and MIG profile) typed in the same row.
 */
export function freeHints(kind: CapacityKind, free: FreeCapacity, v: FormValues): Record<string, string> {
  const text = (f: string) => (v[f] ?? '').trim();
  switch (kind) {
    case 'shared': {
      const s = free.shared ?? [];
      const largest = Math.max(0, ...s.map((x) => x.largest_milli_gpu ?? 0));
      const total = s.reduce((t, x) => t + (x.milli_gpu ?? 0), 0);
      const gpus = s.reduce((t, x) => t + (x.gpus ?? 0), 0);
      const memory = s.reduce((t, x) => t + toInt(x.gpu_memory_mib), 0);
      const largestMemory = Math.max(0, ...s.map((x) => x.largest_gpu_memory_mib ?? 0));
      return {
        'capacity.shared.milli_gpu': `Free now: ${total} thousandths on ${plural(gpus, 'GPU')}, at most ${largest} on one GPU.`,
        // In MiB, the input's unit; the most on one GPU first: a share is placed on one GPU.
        'capacity.shared.gpu_memory_mib': `Free now: at most ${largestMemory} MiB on one GPU, ${memory} MiB on ${plural(gpus, 'GPU')} in all.`,
      };
    }
    case 'mig': {
      const out: Record<string, string> = {};
      const all = free.mig ?? [];
      for (let i = 0; i < migRowCount(v); i++) {
        const profile = text(migField(i, 'profile'));
        const model = text(migField(i, 'model'));
        const ofModel = all.filter((m) => sameModel(model, m.model));
        const profiles = [...new Set(ofModel.map((m) => m.profile))].map((p) => `${p} ${sum(ofModel.filter((m) => m.profile === p))}`);
        out[migField(i, 'profile')] = `Free now${model ? ` on ${model}` : ''}: ${profiles.join(', ') || 'none'} (in the current MIG layouts).`;
        out[migField(i, 'count')] = `Free now: ${sum(ofModel.filter((m) => m.profile === profile))} × ${profile}${model ? ` on ${model}` : ''}.`;
        out[migField(i, 'model')] = `Models with ${profile} free now: ${byModel(all.filter((m) => m.profile === profile)) || 'none'}.`;
      }
      return out;
    }
    case 'gpus':
    case 'nodes': {
      const counts = (kind === 'gpus' ? free.gpus : free.nodes) ?? [];
      const model = text(`capacity.${kind}.model`);
      const unit = kind === 'gpus' ? 'GPU' : 'node';
      return {
        [`capacity.${kind}.count`]: `Free now: ${plural(sum(counts.filter((c) => sameModel(model, c.model))), `${model ? `${model} ` : ''}${unit}`)}.`,
        [`capacity.${kind}.model`]: `Models free now: ${byModel(counts) || 'none'}.`,
      };
    }
  }
}

import type { ComponentChildren } from 'preact';
import type { UsageItem } from '../api/types';
import { coverageText, efficiencyText, formatCost, formatGpuHours, unmeasuredHours } from '../lib/usage';
import { THead } from './Table';

const COLS = ['Allocated', 'Used', 'Waste', 'Not measured', 'Efficiency', 'Coverage', 'Cost'];

function Figures({ item, currency }: { item: UsageItem; currency: string | undefined }) {
  return (
    <>
      <td data-col="allocated">{formatGpuHours(item.allocated_gpu_hours)}</td>
      <td data-col="used">{formatGpuHours(item.used_gpu_hours)}</td>
      <td data-col="waste">{formatGpuHours(item.waste_gpu_hours)}</td>
      <td data-col="unmeasured">{formatGpuHours(unmeasuredHours(item))}</td>
      <td data-col="efficiency">{efficiencyText(item.efficiency)}</td>
      <td data-col="coverage">{coverageText(item.coverage, item.allocated_gpu_hours)}</td>
      <td data-col="cost">{formatCost(item.cost, currency)}</td>
    </>
  );
}

/**
 * A report's items, one row per group (a virtual cluster, a tenant), and the
 * window's total. Allocated = used + waste + not measured: time no sample
 * covers is neither used nor idle, so it has a column of its own.
 */
export function UsageTable({
  caption,
  groupCol,
  items,
  total,
  currency,
  name,
  rowKey,
}: {
  caption: string;
  groupCol: string;
  items: UsageItem[];
  total: UsageItem | undefined;
  currency: string | undefined;
  name: (item: UsageItem) => ComponentChildren;
  rowKey: (item: UsageItem) => string;
}) {
  return (
    <table class="list usage-table" data-usage-report>
      <caption>{caption}</caption>
      <THead cols={[groupCol, ...COLS]} />
      <tbody>
        {items.map((item) => (
          <tr key={rowKey(item)} data-report-row={rowKey(item)}>
            <th scope="row">{name(item)}</th>
            <Figures item={item} currency={currency} />
          </tr>
        ))}
      </tbody>
      {total ? (
        <tfoot>
          <tr data-report-total>
            <th scope="row">Total</th>
            <Figures item={total} currency={currency} />
          </tr>
        </tfoot>
      ) : null}
    </table>
  );
}

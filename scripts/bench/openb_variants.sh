#!/usr/bin/env bash
# Writes synthetic variants of an openb pod list, to check that a placement
# policy wins by placing well rather than by fitting the published traces
# (docs/placement.md, "Other workloads"). Only fractional pods (one GPU, less
# than 1000 milli) change; choices are a deterministic hash of the line
# number, so every awk gives the same files.
#
#   scripts/bench/openb_variants.sh ../shared/data/openb/openb_pod_list_default.csv /tmp/variants
#   build/bin/septa-bench placement --policy fgd,septa --pods /tmp/variants/openb_pod_list_uniform.csv
set -euo pipefail
if (($# != 2)); then
  echo "usage: $0 POD_LIST_CSV OUT_DIR" >&2
  exit 2
fi
src=$1 out=$2
[[ -r $src ]] || { echo "$0: cannot read $src" >&2; exit 2; }
mkdir -p "$out"

variant() {  # $1 = name, $2 = awk body run on fractional rows (sets milli; may print extra rows)
  awk -F, -v OFS=, "
    NR == 1 { for (i = 1; i <= NF; i++) col[\$i] = i; print; next }
    {
      milli = \$col[\"gpu_milli\"] + 0
      if (\$col[\"num_gpu\"] == 1 && milli > 0 && milli < 1000) { $2 }
      print
    }" "$src" >"$out/openb_pod_list_$1.csv"
}

# Every fraction 40 milli smaller.
variant shift40 'm = milli - 40; if (m < 10) m = 10; $col["gpu_milli"] = m'
# Fractions redrawn from 100, 150, ..., 900.
variant uniform '$col["gpu_milli"] = 100 + 50 * ((NR * 7919 + 13) % 17)'
# Fractions from a few shares of a GPU in sevenths, as MIG-sized slices.
variant sevenths 'split("142 285 428 571", s, " "); $col["gpu_milli"] = s[1 + (NR * 104729) % 4]'
# Every fraction also comes with its complement (1000 - milli), named <name>-m.
variant mirror 'print; $col["name"] = $col["name"] "-m"; $col["gpu_milli"] = 1000 - milli'
echo "wrote $out/openb_pod_list_{shift40,uniform,sevenths,mirror}.csv"

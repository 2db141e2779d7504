#!/usr/bin/env bash
# Runs the benchmarks (all, or those named: `bench/run.sh controlplane`) and
# assembles docs/BENCHMARKS.md from the per-benchmark reports in docs/benchmarks/
# (`bench/run.sh --assemble` only assembles).
set -euo pipefail
cd "$(dirname "$0")/.."
all=(controlplane)
selected=("${@:-${all[@]}}")
[ "${1:-}" = "--assemble" ] && selected=()
for name in ${selected[@]+"${selected[@]}"}; do
  echo "== bench: $name"
  bash "bench/$name.sh"
done
{
  echo "# Benchmarks"
  echo
  echo "Measured by \`make bench\` (\`bench/run.sh\`); each section names the script that measured it,"
  echo "its method, and the machine. The machines are noisy: compare figures within one section"
  echo "(measured in the same run), not across sections or days."
  for f in docs/benchmarks/*.md; do
    echo
    cat "$f"
  done
} > docs/BENCHMARKS.md
echo "wrote docs/BENCHMARKS.md"

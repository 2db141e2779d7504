#!/usr/bin/env bash
# Runs the benchmarks (all, or those named: `bench/run.sh controlplane`) and
# assembles docs/BENCHMARKS.md from the per-benchmark reports in docs/benchmarks/
# (`bench/run.sh --assemble` only assembles). A benchmark NAME is bench/NAME.sh
# if that exists, else bench/NAME.ts: compiled (once) with tsconfig.bench.json
# and run with `node --expose-gc`. Each writes docs/benchmarks/NAME.md.
set -euo pipefail
cd "$(dirname "$0")/.."
all=(controlplane informer sync deps sources transport remote hostile fleet rollout shards proxysync pull ui many-syncs writes noop-resync module-memory parse kustomize helm git-oci)
selected=("${@:-${all[@]}}")
[ "${1:-}" = "--assemble" ] && selected=()
compiled=""
for name in ${selected[@]+"${selected[@]}"}; do
  echo "== bench: $name"
  if [ -f "bench/$name.sh" ]; then
    bash "bench/$name.sh"
  elif [ -f "bench/$name.ts" ]; then
    if [ -z "$compiled" ]; then
      echo "compiling the TypeScript benchmarks (tsconfig.bench.json -> .local/bench-dist)..."
      npx tsc -p tsconfig.bench.json
      compiled=1
    fi
    node --expose-gc ".local/bench-dist/bench/$name.js"
  else
    echo "no benchmark named $name (bench/$name.sh or bench/$name.ts)" >&2
    exit 2
  fi
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

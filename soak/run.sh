#!/usr/bin/env bash
# `make soak`: the long reliability runs of issue 15 that do not fit in `make test`
# (soak/README.md). Each stage writes .local/soak/<stage>.json when its checks
# held, recording the commit it ran against and whether the tree had changes; a
# second run skips a stage only when that result is of the commit checked out
# now, at the same SOAK_SCALE, and the tree had and has no changes (resumable),
# unless SOAK_FRESH=1.
#   bash soak/run.sh                 every stage not done yet
#   bash soak/run.sh load leaks      only these
#   SOAK_SCALE=0.1 bash soak/run.sh  shortened (sizes and durations x 0.1)
# At full scale about 60 minutes in all (soak/README.md has each stage's time). Needs `make build` and the control
# plane binary (`make soak` builds both); the stages start control planes of
# their own on free ports (load, leaks) or use the shared clusters (`make up`,
# as `make test` does: the property tests).
set -uo pipefail
cd "$(dirname "$0")/.."
all=(load leaks source-property prune-property hostile-input api-faults failover apiserver-restart recreate)
selected=("${@:-${all[@]}}")
dir=.local/soak
mkdir -p "$dir"
if [ "${SOAK_FRESH:-}" = 1 ]; then rm -f "$dir"/*.json; fi
export SOAK_SCALE="${SOAK_SCALE:-1}"
# The property tests' step counts and the rounds of the blind-watch run follow SOAK_SCALE unless given.
scaled() { awk -v s="$SOAK_SCALE" -v n="$1" -v min="$2" 'BEGIN { v = int(n * s); print (v < min ? min : v) }'; }
export PRUNE_STEPS="${PRUNE_STEPS:-$(scaled 10000 100)}"
export GAP_ROUNDS="${GAP_ROUNDS:-$(scaled 30 4)}"
JEST=(NODE_OPTIONS=--experimental-vm-modules SOAK=1 npx jest)
failed=()

# The soak stages and their result files (test/support/soak-*.ts) are compiled
# first; load and leaks measure dist/, built here from the tree as it is.
echo "compiling the soak stages (soak/tsconfig.json -> .local/soak-dist)..."
npx tsc -p soak/tsconfig.json || exit 1
stage_cli() { node .local/soak-dist/test/support/soak-stage.js "$@"; }
built=""
build() {
  if [ -z "$built" ]; then
    echo "building the operator (make build: tsconfig.build.json -> dist/)..."
    npx tsc -p tsconfig.build.json || return 1
    built=1
  fi
}

# A jest stage passes when jest ran at least one test and none failed (from its
# --json report); its result file records the commit, the command, the time and
# each test's outcome.
jest_stage() {
  local stage=$1; shift
  local began=$SECONDS ran report="$dir/$stage.jest-report.json"
  ran=$(stage_cli provenance) || return 1
  rm -f "$report"
  env "$@" --json --outputFile="$report"
  stage_cli jest "$stage" "$ran" "$report" $((SECONDS - began)) "$*"
}

run_stage() {
  case "$1" in
    load | leaks)
      build && node ".local/soak-dist/test/support/soak-$1.js" ;;
    source-property)
      jest_stage "$1" "${JEST[@]}" test/unit/source-property.test.ts ;;
    prune-property)
      jest_stage "$1" PRUNE_STEPS="$PRUNE_STEPS" "${JEST[@]}" test/integration/prune-property.test.ts ;;
    hostile-input)
      jest_stage "$1" "${JEST[@]}" test/integration/hostile-input.test.ts ;;
    api-faults)
      jest_stage "$1" "${JEST[@]}" test/integration/api-faults.test.ts -t soak ;;
    failover)
      jest_stage "$1" "${JEST[@]}" test/integration/failover.test.ts ;;
    apiserver-restart)
      jest_stage "$1" GAP_ROUNDS="$GAP_ROUNDS" "${JEST[@]}" test/integration/apiserver-restart.test.ts -t blind ;;
    recreate)
      jest_stage "$1" RECREATE_ROUNDS="$(scaled 30 3)" "${JEST[@]}" test/integration/recreate.test.ts -t rounds ;;
    *)
      echo "no soak stage named $1 (stages: ${all[*]})" >&2
      return 2 ;;
  esac
}

# Done: its result says it passed, at this SOAK_SCALE (a shortened run does not
# stand for a full one), at the commit checked out now, with no changes in the
# tree then or now (test/support/soak-result.ts). Prints why not otherwise.
done_before() {
  local because
  because=$(stage_cli skip "$1") && return 0
  echo "== soak: $1: runs ($because)"
  return 1
}

for stage in "${selected[@]}"; do
  if done_before "$stage"; then
    echo "== soak: $stage: done before ($dir/$stage.json; SOAK_FRESH=1 runs it again)"
    continue
  fi
  echo "== soak: $stage (SOAK_SCALE=$SOAK_SCALE)"
  began=$SECONDS
  if run_stage "$stage"; then
    echo "== soak: $stage passed in $((SECONDS - began)) s"
  else
    echo "== soak: $stage FAILED after $((SECONDS - began)) s (run again to retry it; the stages done are kept)"
    failed+=("$stage")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "soak: failed: ${failed[*]}"
  exit 1
fi
echo "soak: every stage passed (results in $dir/)"

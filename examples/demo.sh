#!/usr/bin/env bash
# `make demo`: brings the local clusters up and shows them. Later stages grow
# this into the three journeys (bootstrap, registration, rollout).
set -euo pipefail
cd "$(dirname "$0")/.."
CP=.local/bin/controlplane
KUBECTL=.local/bin/kubectl

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Starting the local control plane (mgmt, edge-1, edge-2)"
"$CP" up mgmt edge-1 edge-2

for c in mgmt edge-1 edge-2; do
  step "Cluster $c"
  "$KUBECTL" --kubeconfig ".local/$c.kubeconfig" version | grep Server
  "$KUBECTL" --kubeconfig ".local/$c.kubeconfig" get namespaces
done

step "syncprims CLI"
node dist/cli/main.js version --kubeconfig .local/mgmt.kubeconfig

K=("$KUBECTL" --kubeconfig .local/mgmt.kubeconfig)
step "Installing the CRDs on mgmt"
"${K[@]}" apply --server-side --field-manager syncprims -f crds/
"${K[@]}" wait --for condition=Established crd --all --timeout 60s >/dev/null
"${K[@]}" create namespace demo --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" apply -n demo -f examples/sync-inline.yaml
step "Three Syncs ordered by dependsOn (database <- app <- dashboards), created at once"
"${K[@]}" create namespace shop --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" apply -n demo -f examples/sync-dependencies.yaml

step "Running the operator (namespace demo) until the example Syncs are Ready"
node dist/cli/main.js run --kubeconfig .local/mgmt.kubeconfig --namespace demo \
  --metrics-addr 127.0.0.1:18080 --health-addr 127.0.0.1:18081 > .local/demo-operator.log 2>&1 &
op=$!
trap 'kill $op 2>/dev/null || true' EXIT
# Wait for the operator itself (its caches primed): on a second run the Syncs are Ready already.
for _ in $(seq 1 120); do
  curl -fsS 127.0.0.1:18081/readyz >/dev/null 2>&1 && break
  kill -0 $op 2>/dev/null || { echo "the operator exited; its log:" >&2; tail -20 .local/demo-operator.log >&2; exit 1; }
  sleep 0.5
done
"${K[@]}" wait --for=condition=Ready sync/hello sync/database sync/app sync/dashboards -n demo --timeout=60s
curl -fsS 127.0.0.1:18081/readyz && echo " (readyz)"
curl -fsS 127.0.0.1:18080/metrics | grep -E '^(controller_runtime_reconcile_total|syncprims_cache_objects)'
kill -TERM $op && wait $op || true
"${K[@]}" get syncprims -n demo
"${K[@]}" get configmap greeting -n hello -o jsonpath='{"ConfigMap hello/greeting: "}{.data.message}{"\n"}'
"${K[@]}" get events -n demo --field-selector involvedObject.name=hello -o custom-columns=REASON:.reason,MESSAGE:.message
step "In what order the operator applied them (its log)"
node -e '
  const lines = require("fs").readFileSync(".local/demo-operator.log", "utf8").split("\n").filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
  const shown = lines.filter((l) => ["applied", "dependencies met", "ready"].includes(l.msg) || l.reason === "DependencyNotReady");
  for (const l of shown) console.log(l.time, (l.name + "          ").slice(0, 11), l.msg, l.changes ?? "");
  if (shown.length === 0) console.log("nothing to apply: every Sync was in place from an earlier run, and the operator wrote nothing (the clusters keep their data across make down; make clean starts afresh)");
'

cat <<'NEXT'

The clusters keep running in the background. Try:
  .local/bin/kubectl --kubeconfig .local/edge-1.kubeconfig get ns
  .local/bin/controlplane status          # what runs, where
  make down                               # stop everything
NEXT

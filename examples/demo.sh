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

cat <<'NEXT'

The clusters keep running in the background. Try:
  .local/bin/kubectl --kubeconfig .local/edge-1.kubeconfig get ns
  .local/bin/controlplane status          # what runs, where
  make down                               # stop everything
NEXT

#!/usr/bin/env bash
# `make demo`: the three journeys on the local control plane.
#   1. bootstrap: the management cluster manages its own operator;
#   2. registration: `syncprims cluster add` registers edge-1 (push: mgmt dials it) and edge-2 (pull:
#      it connects upward, `syncprims join` installs its operator with the join bundle; mgmt never
#      dials it), both labelled role=edge, each with its value region (the annotation
#      values.syncprims.dev/region of its Secret); the FleetSync install (one RemoteSync per push
#      edge) installs the operator in edge-1, the FleetSync baseline (one ProxySync per edge, after
#      that edge's install, or install as a whole for the pull edge) keeps a baseline Sync there;
#   3. rollout: the FleetSync shop rolls an app out in two waves (a canary, edge-1, then the rest,
#      the pull edge-2 among them):
#      a good release, a broken one that halts at the canary, and `syncprims rollout undo`; one
#      template, each edge its own content: its region substituted, the canary's override a label;
#   4. a newcomer: edge-3 registered with one command gets the operator, the baseline and shop.
# It leaves the clusters and one operator per cluster running; `make down` stops all of it.
#
# The local clusters run no pods: each operator runs as a local process (pid and log under
# .local/operators/), with the token of the ServiceAccount that the installed manifests create,
# and this script writes the status of the operator's Deployment as a kubelet would.
#
#   examples/demo.sh          run the journeys (again: every step is safe to repeat)
#   examples/demo.sh stop     stop the operators it started
#
# DEMO_CLUSTERS (default "mgmt edge-1 edge-2 edge-3") names the clusters that play mgmt, edge-1,
# edge-2 and edge-3; without a fourth name (or with under 1 GiB of memory available: a local API
# server takes about 300 MB) journey 4 is left out. The operators' metrics and health endpoints
# take free ports (read back from their logs). The journeys test runs this script on clusters of
# its own.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CP=$ROOT/.local/bin/controlplane
KUBECTL=$ROOT/.local/bin/kubectl
OPS=$ROOT/.local/operators
read -r -a CLUSTERS <<<"${DEMO_CLUSTERS:-mgmt edge-1 edge-2 edge-3}"
MGMT=${CLUSTERS[0]}
EDGES=("${CLUSTERS[@]:1:3}")
ROLES=(mgmt edge-1 edge-2 edge-3)
# Each edge's value region (by role), which the FleetSync shop writes into its ConfigMap.
REGIONS=(eu-west us-east ap-south)
# The edge (by number, 0-based) that is a pull cluster: it connects upward to mgmt (syncprims join).
PULL=1
NS=syncprims-system

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then B=$'\033[1m'; D=$'\033[2m'; R=$'\033[0m'; else B=; D=; R=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$R"; }
say() { printf '%s%s%s\n' "$D" "$*" "$R"; }
# Shows a command as a user would type it (kubectl, syncprims), then runs it.
run() {
  local shown
  case $1 in
    k) shown="kubectl --kubeconfig .local/$2.kubeconfig ${*:3}" ;;
    *) shown="$*" ;;
  esac
  printf '%s$ %s%s\n' "$D" "${shown//$ROOT\//}" "$R"
  "$@"
}
kc() { echo "$ROOT/.local/$1.kubeconfig"; }
k() { local c=$1; shift; "$KUBECTL" --kubeconfig "$(kc "$c")" "$@"; }
syncprims() { node "$ROOT/dist/cli/main.js" "$@"; }

# Stops the operators started for the clusters named (all of them when none is).
stop_operators() {
  local pids=() c
  if [ $# -eq 0 ]; then pids=("$OPS"/*.pid); else for c in "$@"; do pids+=("$OPS/$c.pid"); done; fi
  for pid in "${pids[@]}"; do
    [ -e "$pid" ] || continue
    kill -TERM "$(cat "$pid")" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$(cat "$pid")" 2>/dev/null || break; sleep 0.5; done
    rm -f "$pid"
  done
}

if [ "${1:-}" = stop ]; then
  if [ -n "${DEMO_CLUSTERS:-}" ]; then stop_operators "${CLUSTERS[@]}"; else stop_operators; fi
  exit 0
fi

# A kubeconfig for cluster $1 with the token of the installed operator's ServiceAccount: the
# operator runs with what `syncprims install` grants it, and nothing more.
operator_kubeconfig() {
  local c=$1 out=$OPS/$1.kubeconfig token server ca
  token=$(k "$c" create token syncprims-operator -n "$NS" --duration=48h)
  server=$(k "$c" config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(k "$c" config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: $c, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: syncprims-operator, user: {token: "$token"}}]
contexts: [{name: $c, context: {cluster: $c, user: syncprims-operator}}]
current-context: $c
EOF
  echo "$out"
}

# The flags of a pull cluster's operator (none for a push one): the join bundle from the Secret that
# `syncprims join` wrote (its Deployment mounts it), into which the operator writes its renewed token.
upstream_flags() {
  local c=$1 file=$OPS/$1.upstream.kubeconfig
  [ -n "$(k "$c" get secret syncprims-upstream -n "$NS" --ignore-not-found -o name)" ] || return 0
  (umask 077 && k "$c" get secret syncprims-upstream -n "$NS" -o jsonpath='{.data.value}' | base64 -d >"$file")
  echo "--upstream-kubeconfig $file --upstream-secret syncprims-upstream"
}

# Starts the operator of cluster $1 (role index $2) as a local process in place of its pods.
start_operator() {
  local c=$1 i=$2 config health metrics upstream
  config=$(operator_kubeconfig "$c")
  read -r -a upstream <<<"$(upstream_flags "$c")"
  node "$ROOT/dist/cli/main.js" run --kubeconfig "$config" --leader-elect --leader-election-namespace "$NS" \
    --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 "${upstream[@]}" >"$OPS/$c.log" 2>&1 &
  echo $! >"$OPS/$c.pid"
  for _ in $(seq 1 120); do
    # The ports it was given, from its "endpoints listening" log line.
    health=$(grep -o '"health":[0-9]*' "$OPS/$c.log" | head -1 | cut -d: -f2 || true)
    metrics=$(grep -o '"metrics":[0-9]*' "$OPS/$c.log" | head -1 | cut -d: -f2 || true)
    [ -n "$health" ] && curl -fsS "127.0.0.1:$health/readyz" >/dev/null 2>&1 && { say "operator of ${ROLES[$i]} ($c) running: pid $(cat "$OPS/$c.pid"), log $OPS/$c.log, metrics 127.0.0.1:$metrics"; return; }
    kill -0 "$(cat "$OPS/$c.pid")" 2>/dev/null || break
    sleep 0.5
  done
  echo "the operator of $c did not become ready; its log:" >&2
  tail -20 "$OPS/$c.log" >&2
  exit 1
}

# Writes the operator Deployment's status in cluster $1 as a kubelet would once its pods run:
# the local process started above stands in for them.
stand_in_for_kubelet() {
  local c=$1 generation replicas
  k "$c" wait --for=create deployment/syncprims-operator -n "$NS" --timeout=120s >/dev/null
  generation=$(k "$c" get deployment syncprims-operator -n "$NS" -o jsonpath='{.metadata.generation}')
  replicas=$(k "$c" get deployment syncprims-operator -n "$NS" -o jsonpath='{.spec.replicas}')
  k "$c" patch deployment syncprims-operator -n "$NS" --subresource=status --type=merge -p "{\"status\": {
    \"observedGeneration\": $generation, \"replicas\": $replicas, \"updatedReplicas\": $replicas,
    \"readyReplicas\": $replicas, \"availableReplicas\": $replicas,
    \"conditions\": [{\"type\": \"Available\", \"status\": \"True\", \"reason\": \"MinimumReplicasAvailable\"},
                     {\"type\": \"Progressing\", \"status\": \"True\", \"reason\": \"NewReplicaSetAvailable\"}]}}" >/dev/null
  say "$c: Deployment syncprims-operator marked available ($replicas replicas), as its kubelet would"
}

# Waits until the ConfigMap apps/shop-release in cluster $1 says version $2.
wait_version() {
  k "$1" wait --for=create configmap/shop-release -n apps --timeout=120s >/dev/null
  k "$1" wait --for=jsonpath='{.data.version}'="$2" configmap/shop-release -n apps --timeout=120s >/dev/null
}

# Applies the FleetSync shop (examples/rollout/app.yaml) at version $1 (more sed expressions may
# follow), showing how. --force-conflicts: after `syncprims rollout undo`, the template fields it
# wrote back are the field manager syncprims-cli's, and the next release takes them back.
release() {
  local version=$1 expressions=() shown
  shift
  if [ "$version" = 1.0.0 ] && [ $# -eq 0 ]; then
    run k "$MGMT" apply --server-side --force-conflicts -n fleet -f examples/rollout/app.yaml
    return
  fi
  expressions=(-e "s/1\.0\.0/$version/g" "$@")
  shown="sed"
  for e in "${expressions[@]}"; do [ "$e" = -e ] && shown+=" -e" || shown+=" '$e'"; done
  printf '%s$ %s examples/rollout/app.yaml | kubectl --kubeconfig .local/%s.kubeconfig apply --server-side --force-conflicts -n fleet -f -%s\n' "$D" "$shown" "$MGMT" "$R"
  sed "${expressions[@]}" examples/rollout/app.yaml | k "$MGMT" apply --server-side --force-conflicts -n fleet -f -
}

# `syncprims rollout status` of the FleetSync shop: it follows the rollout until it is Complete
# (exit 0) or Halted (exit 1); $1 is the exit code expected.
rollout_status() {
  local want=$1 code=0
  run syncprims rollout status fleetsync/shop -n fleet --timeout 180s --kubeconfig "$(kc "$MGMT")" || code=$?
  if [ "$code" != "$want" ]; then
    echo "syncprims rollout status exited $code, not $want" >&2
    exit 1
  fi
}

# An earlier demo rolled shop out with two hand-written ProxySyncs (shop-wave-1, shop-wave-2)
# that keep the same Sync apps/shop in the edges: they are deleted (their Syncs prune the app),
# and the FleetSync shop's children make it again.
let_go_of_wave_proxysyncs() {
  local obj
  for obj in proxysync/shop-wave-2 proxysync/shop-wave-1; do
    [ -n "$(k "$MGMT" get "$obj" -n fleet --ignore-not-found -o name)" ] || continue
    k "$MGMT" delete "$obj" -n fleet --timeout=120s >/dev/null
    say "$obj, an earlier demo's hand-written wave, deleted: the FleetSync shop takes over"
  done
}

# Registers edge number $1 (0-based) in the namespace fleet of mgmt, with its value region (an
# annotation of its Secret): one command. The pull edge is registered with --pull (mgmt keeps no
# credential of it), and joins with the bundle that wrote: `syncprims join` installs its operator.
register() {
  local role=${ROLES[$(($1 + 1))]}
  if [ "$1" = "$PULL" ]; then
    let_go_of_push "$role" "${EDGES[$1]}"
    run syncprims cluster add "$role" --pull --label role=edge --value "region=${REGIONS[$1]}" -n fleet --join-file "$OPS/$role.join.yaml" --mgmt-kubeconfig "$(kc "$MGMT")"
    run syncprims join --kubeconfig "$(kc "${EDGES[$1]}")" --join-file "$OPS/$role.join.yaml"
    return
  fi
  run syncprims cluster add "$role" --kubeconfig "$(kc "${EDGES[$1]}")" --label role=edge --value "region=${REGIONS[$1]}" -n fleet --mgmt-kubeconfig "$(kc "$MGMT")"
}

# An earlier demo registered the pull edge as a push cluster: it is labelled out of the FleetSyncs
# first (their children there go while it is still reachable, each pruning what it applied: install's
# the operator it installed), then its Secret is deleted (a cluster changes mode only so) and it
# joins again by itself.
let_go_of_push() {
  local role=$1 edge=$2 type
  type=$(k "$MGMT" get secret "$role-kubeconfig" -n fleet --ignore-not-found -o jsonpath='{.type}')
  [ -n "$type" ] && [ "$type" != syncprims.dev/pull-cluster ] || return 0
  k "$MGMT" label secret "$role-kubeconfig" -n fleet role- >/dev/null
  k "$MGMT" wait --for=delete "remotesync/install-$role" "proxysync/baseline-$role" "proxysync/shop-$role" -n fleet --timeout=180s >/dev/null 2>&1 || true
  k "$edge" wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 || true
  # That demo's install FleetSync selects every edge: this one leaves pull clusters out, so it is
  # applied before the edge comes back as one (else it would get a RemoteSync it cannot use).
  k "$MGMT" apply --server-side -n fleet -f examples/registration/install.yaml >/dev/null
  k "$MGMT" delete secret "$role-kubeconfig" -n fleet >/dev/null
  say "$role, a push cluster of an earlier demo, let go (what the FleetSyncs made for it pruned): it joins again as a pull cluster"
}

# Shows the ConfigMap apps/shop-release in each edge (by number, 0-based): its version, its region
# (the edge's value, substituted) and its label track (the canary's override).
show_releases() {
  local i
  for i in "$@"; do
    run k "${EDGES[$i]}" get configmap shop-release -n apps -o custom-columns='VERSION:.data.version,REGION:.data.region,TRACK:.metadata.labels.track'
  done
}

# Waits until the FleetSyncs' children for the clusters named are Ready (shown for the first); a
# pull cluster has no install-<cluster> (its operator came by join).
wait_registered() {
  local names=() c
  for c in "$@"; do
    [ "$c" = "${ROLES[$((PULL + 1))]}" ] || names+=("remotesync/install-$c")
    names+=("proxysync/baseline-$c")
  done
  k "$MGMT" wait --for=create "${names[@]}" -n fleet --timeout=120s >/dev/null
  run k "$MGMT" wait --for=condition=Ready "${names[@]}" -n fleet --timeout=180s
}

# An earlier demo registered the edges with hand-written RemoteSyncs and ProxySyncs
# (install-edge-N, baseline-edge-N) and Secrets without the inventory's label. They are let go,
# deletionPolicy Orphan (what they applied stays), and the FleetSyncs' children of the same names
# take it over; the Secret is registered again by cluster add.
let_go_of_hand_written() {
  local role=$1 obj
  for obj in "remotesync/install-$role" "proxysync/baseline-$role"; do
    [ -n "$(k "$MGMT" get "$obj" -n fleet --ignore-not-found -o name)" ] || continue
    [ -z "$(k "$MGMT" get "$obj" -n fleet -o jsonpath='{.metadata.labels.syncprims\.dev/fleetsync}')" ] || continue
    k "$MGMT" patch "$obj" -n fleet --type=merge -p '{"spec": {"deletionPolicy": "Orphan"}}' >/dev/null
    k "$MGMT" delete "$obj" -n fleet --timeout=120s >/dev/null
    say "$obj, written by hand by an earlier demo, let go (what it applied stays)"
  done
  if [ -n "$(k "$MGMT" get secret "$role-kubeconfig" -n fleet --ignore-not-found -o name)" ] &&
    [ -z "$(k "$MGMT" get secret "$role-kubeconfig" -n fleet -o jsonpath='{.metadata.labels.syncprims\.dev/cluster}')" ]; then
    k "$MGMT" delete secret "$role-kubeconfig" -n fleet >/dev/null
  fi
}

mkdir -p "$OPS"
# kubectl's discovery cache, of this run only: the local clusters reuse their ports, and what
# ~/.kube/cache holds for a port from another cluster that had it (other CRDs; another kind whose
# short name is also `sync`) sent `kubectl wait sync/syncprims` to that kind (NotFound).
export KUBECACHEDIR=$ROOT/.local/kubectl-cache
rm -rf "$KUBECACHEDIR"
# Journey 4's third edge is another local API server (about 300 MB): left out when memory is short.
if [ ${#EDGES[@]} -ge 3 ] && [ "$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null || echo 4096)" -lt 1024 ]; then
  say "under 1 GiB of memory available: journey 4 (a third edge, ${EDGES[2]}) is left out"
  CLUSTERS=("${CLUSTERS[@]:0:3}")
  EDGES=("${EDGES[@]:0:2}")
fi
step "Starting the local clusters: ${CLUSTERS[*]}"
"$CP" --dir "$ROOT/.local" up "${CLUSTERS[@]}"
# A second run starts its operators afresh.
stop_operators "${CLUSTERS[@]}"

step "1. Bootstrap: ${MGMT} manages its own operator"
run syncprims bootstrap --kubeconfig "$(kc "$MGMT")"
start_operator "$MGMT" 0
stand_in_for_kubelet "$MGMT"
run k "$MGMT" wait --for=condition=Ready sync/syncprims -n "$NS" --timeout=120s
run syncprims tree sync/syncprims -n "$NS" --kubeconfig "$(kc "$MGMT")"

step "2. Registration: syncprims cluster add registers ${ROLES[1]} (push) and ${ROLES[2]} (pull, joined by syncprims join); FleetSyncs install the operator in the push edge and keep a baseline Sync in both"
k "$MGMT" create namespace fleet --dry-run=client -o yaml | k "$MGMT" apply --server-side -f - >/dev/null
for role in "${ROLES[@]:1:${#EDGES[@]}}"; do let_go_of_hand_written "$role"; done
for i in 0 1; do register "$i"; done
syncprims install >"$OPS/install.yaml"
k "$MGMT" create configmap syncprims-install -n fleet --from-file=manifests.yaml="$OPS/install.yaml" \
  --dry-run=client -o yaml | k "$MGMT" apply --server-side -f - >/dev/null
say "ConfigMap fleet/syncprims-install holds the output of 'syncprims install'"
run k "$MGMT" apply --server-side -n fleet -f examples/registration/
for i in 0 1; do
  stand_in_for_kubelet "${EDGES[$i]}"
  start_operator "${EDGES[$i]}" $((i + 1))
done
run syncprims get clusters -n fleet --kubeconfig "$(kc "$MGMT")"
# Run again, edge-3 is registered from the last run (so the rollout below includes it): its
# operator starts now, with the others.
if [ ${#EDGES[@]} -ge 3 ] && [ -n "$(k "$MGMT" get secret edge-3-kubeconfig -n fleet --ignore-not-found -o name)" ]; then
  stand_in_for_kubelet "${EDGES[2]}"
  start_operator "${EDGES[2]}" 3
fi
wait_registered edge-1 edge-2
run syncprims get -A --kubeconfig "$(kc "$MGMT")"
run syncprims tree proxysync/baseline-edge-1 -n fleet --kubeconfig "$(kc "$MGMT")"

step "3. Rollout: the FleetSync shop, in two waves: a canary (${ROLES[1]}), then the rest"
let_go_of_wave_proxysyncs
release 1.0.0
rollout_status 0
say "shop 1.0.0 runs in every edge: edge-1 $(k "${EDGES[0]}" get configmap shop-release -n apps -o jsonpath='{.data.version}'), edge-2 $(k "${EDGES[1]}" get configmap shop-release -n apps -o jsonpath='{.data.version}')"
say "one template, each edge its own ConfigMap: its region substituted, and the canary's override adds the label track"
show_releases 0 1

step "3a. Release 1.1.0: the canary takes it, soaks 5s Ready, then the rest take it"
release 1.1.0
rollout_status 0
wait_version "${EDGES[1]}" 1.1.0

step "3b. Release 1.2.0 with a mistake (a Service port the API server refuses): it halts at the canary"
release 1.2.0 -e 's/port: 80$/port: 80000/'
rollout_status 1
say "edge-2 still runs $(k "${EDGES[1]}" get configmap shop-release -n apps -o jsonpath='{.data.version}') (its child at revision $(k "$MGMT" get proxysync shop-edge-2 -n fleet -o jsonpath='{.metadata.annotations.syncprims\.dev/fleet-revision}')): the broken release never reached it"
run syncprims get -n fleet --status-selector ready=false --kubeconfig "$(kc "$MGMT")"
run syncprims rollout history fleetsync/shop -n fleet --kubeconfig "$(kc "$MGMT")"

step "3c. Undo: syncprims rollout undo writes the last good template (1.1.0) back; it rolls like any change"
run syncprims rollout undo fleetsync/shop -n fleet --kubeconfig "$(kc "$MGMT")"
rollout_status 0
wait_version "${EDGES[0]}" 1.1.0
say "edge-1 runs $(k "${EDGES[0]}" get configmap shop-release -n apps -o jsonpath='{.data.version}') again, edge-2 $(k "${EDGES[1]}" get configmap shop-release -n apps -o jsonpath='{.data.version}')"
run syncprims tree fleetsync/shop -n fleet --kubeconfig "$(kc "$MGMT")"

if [ ${#EDGES[@]} -ge 3 ]; then
  step "4. A newcomer: registering ${ROLES[3]} is one command; the FleetSyncs do the rest"
  register 2
  say "the FleetSync install now has a RemoteSync install-edge-3, baseline a ProxySync baseline-edge-3 waiting for it, and shop a ProxySync shop-edge-3 waiting for that"
  if ! kill -0 "$(cat "$OPS/${EDGES[2]}.pid" 2>/dev/null)" 2>/dev/null; then
    stand_in_for_kubelet "${EDGES[2]}"
    start_operator "${EDGES[2]}" 3
  fi
  wait_registered edge-3
  # (install has no child for the pull edge: its operator came by join.)
  run k "$MGMT" wait --for=jsonpath='{.status.readyClusters}'=2/2 fleetsync/install -n fleet --timeout=180s
  run k "$MGMT" wait --for=jsonpath='{.status.readyClusters}'=3/3 fleetsync/baseline fleetsync/shop -n fleet --timeout=180s
  run syncprims get clusters -n fleet --kubeconfig "$(kc "$MGMT")"
fi

step "Where it all stands"
run syncprims get -A --kubeconfig "$(kc "$MGMT")"
for i in "${!EDGES[@]}"; do
  release=$(k "${EDGES[$i]}" get configmap shop-release -n apps --ignore-not-found -o jsonpath='{.data.version} (region {.data.region}')
  track=$(k "${EDGES[$i]}" get configmap shop-release -n apps --ignore-not-found -o jsonpath='{.metadata.labels.track}')
  [ -n "$release" ] && release="$release${track:+, track $track})" || release="none (not in the rollout)"
  printf '%s: shop %s; Syncs: ' "${ROLES[$((i + 1))]}" "$release"
  k "${EDGES[$i]}" get syncs -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}'
  echo
done
[ ${#EDGES[@]} -ge 3 ] && NEWCOMER="
  4. syncprims cluster add registered ${ROLES[3]} (${EDGES[2]}), and nothing else was needed: the
     FleetSyncs gave it the operator, then the baseline, then shop at its current revision." || NEWCOMER=

cat <<NEXT

${B}What happened${R}
  1. syncprims bootstrap installed the operator in $MGMT and a Sync (syncprims-system/syncprims)
     that keeps the operator's own manifests applied.
  2. syncprims cluster add registered ${EDGES[0]} (push) and ${EDGES[1]} (pull: --pull, then syncprims join
     installed its operator with the join bundle; it connects upward, $MGMT keeps no credential of it
     and never dials it), both labelled role=edge; the FleetSync install made one RemoteSync per push
     edge, which installed the operator there; the FleetSync baseline made one ProxySync per edge,
     each waiting for its own edge's install (the pull edge, which install leaves out: for install as
     a whole), which keeps a Sync "baseline" there, applied by that edge's own operator, its status
     reflected in $MGMT (the pull edge's by its operator, through its assignment in $MGMT).
  3. The FleetSync shop rolled the app out in two waves, a canary (${EDGES[0]}) then the rest (the pull
     ${EDGES[1]} among them), the same ProxySyncs whether the edge is push or pull:
     1.0.0, then 1.1.0; the broken 1.2.0 halted at the canary and never reached the rest, and
     syncprims rollout undo brought 1.1.0 back. Its one template gave each edge its own ConfigMap:
     the edge's region (\${region}, a value of its Secret), and on the canary alone, by an override,
     the label track=canary.${NEWCOMER}

${B}Explore${R} (the clusters and the operators keep running)
  export KUBECONFIG=$(kc "$MGMT")
  node dist/cli/main.js get -A                          # every sync, Ready or not
  node dist/cli/main.js rollout status fleetsync/shop -n fleet  # where the rollout stands
  node dist/cli/main.js tree fleetsync/shop -n fleet    # its waves, each child in its edge
  node dist/cli/main.js get clusters -n fleet           # the registered clusters, and what selects each
  node dist/cli/main.js graph -n fleet                  # the dependency graph (Mermaid)
  node dist/cli/main.js doctor -A                       # anything stuck?
  .local/bin/kubectl get syncprims -A
  tail -f .local/operators/*.log                        # the operators' logs
  make down                                             # stop the operators and the clusters
NEXT

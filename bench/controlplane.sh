#!/usr/bin/env bash
# The local control plane: cold build time (empty Go caches), warm start time of
# the three default clusters, and the memory of the control plane when idle.
# It runs a second, independent control plane (own directory and ports), so a
# running one is not disturbed. SKIP_COLD_BUILD=1 keeps the previous cold figure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.local/bin/controlplane
OUT=docs/benchmarks/controlplane.md
RUNS=${RUNS:-3}
# Free ports: etcd's picked by the supervisor, the clusters' asked for as NAME:0.
ETCD_PORT=0
CLUSTERS=(mgmt:0 edge-1:0 edge-2:0)
DIR=$(mktemp -d /tmp/syncprims-bench-cp.XXXXXX)
cp=("$BIN" --dir "$DIR" --etcd-port "$ETCD_PORT")
trap '"${cp[@]}" down >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

cold_line=""
if [ "${SKIP_COLD_BUILD:-}" != "1" ]; then
  echo "cold build (empty GOMODCACHE and GOCACHE; downloads included)..."
  caches=$(mktemp -d /tmp/syncprims-bench-gocache.XXXXXX)
  t=$(now)
  (cd controlplane && GOMODCACHE=$caches/mod GOCACHE=$caches/build CGO_ENABLED=0 \
    go build -trimpath -o "$caches/controlplane" .)
  cold=$(elapsed "$t")
  size=$(du -sm "$caches/mod" | cut -f1)
  chmod -R u+w "$caches" && rm -rf "$caches"
  cold_line="| cold build of \`controlplane\` (module download + compile, empty caches) | $(printf '%.0f' "$cold") s | module cache ${size} MB |"
  echo "  ${cold}s"
elif [ -f "$OUT" ]; then
  cold_line=$(grep '^| cold build' "$OUT" || true)
fi

echo "warm start of ${CLUSTERS[*]} ($RUNS runs; etcd data kept between runs after the first)..."
starts=()
for i in $(seq "$RUNS"); do
  t=$(now)
  "${cp[@]}" up "${CLUSTERS[@]}" >/dev/null
  s=$(elapsed "$t")
  s=$(printf '%.1f' "$s")
  starts+=("$s")
  echo "  run $i: ${s}s"
  [ "$i" -lt "$RUNS" ] && "${cp[@]}" down >/dev/null
done
start_median=$(printf '%s\n' "${starts[@]}" | median)

echo "idle memory (after 30 s idle)..."
sleep 30
mem_rows=""
total=0
for kind in serve kube-apiserver kube-controller-manager; do
  kb=0
  for pid in $(pgrep -f "$DIR" || true); do
    args=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)
    case "$args" in *" $kind"*) ;; *) continue ;; esac
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    kb=$((kb + rss))
  done
  total=$((total + kb))
  label=$kind; [ "$kind" = serve ] && label="supervisor + embedded etcd"
  mem_rows+="| RSS of $label | $((kb / 1024)) MiB | |"$'\n'
done

cat > "$OUT" <<REPORT
## Local control plane

Script: \`bench/controlplane.sh\`. Measured $(date -u +%Y-%m-%d) on $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB,
$(go version | cut -d' ' -f3), Kubernetes v1.36.3, etcd embedded. The clusters run on their own
directory and ports, so a control plane already running does not share the machine's caches.

Method: the cold build runs \`go build\` with empty \`GOMODCACHE\` and \`GOCACHE\` (so it includes
downloading the modules). The warm start is \`controlplane up\` of three clusters from nothing
running until each answers \`/readyz\` (the first run also creates etcd's data; the median of
$RUNS runs is reported). Memory is the resident set of each process, read from \`/proc\`, after
30 s with the three clusters idle.

| measure | value | note |
|---|---|---|
$cold_line
| warm start of 3 clusters to \`/readyz\` (median of $RUNS) | ${start_median} s | runs: ${starts[*]} |
${mem_rows}| RSS of the whole control plane, 3 clusters idle | $((total / 1024)) MiB | 1 etcd, 3 apiservers, 3 controller managers |
REPORT
cat "$OUT"

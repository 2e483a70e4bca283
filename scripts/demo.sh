#!/usr/bin/env bash
# The one-command demo: a real `pulumi up` of the dev stack against the local Together simulator.
#   scripts/demo.sh up     start the simulator (if needed), then `pulumi up` the dev stack
#   scripts/demo.sh down   destroy the dev stack and stop the simulator, waiting until it and its
#                          control planes are gone (docs/simulator.md says what stays in .demo/)
# DEMO_BACKEND=postgres keeps the Pulumi state in a throwaway PostgreSQL server (scripts/postgres.sh)
# instead of the default file backend in .demo/state; `down` uses the backend `up` used.
# Everything it keeps lives in .demo/ (git-ignored). Run through `make demo` / `make demo-down`,
# which build the virtualenv, the engine, the Kubernetes provider plugin and the Kubernetes
# binaries first and pass TOGETHER_ENGINE_BIN, TOGETHER_K8S_PROVIDER_BIN and TOGETHER_KUBE_BIN.
# The simulator runs with --kubernetes: every cluster gets a real control plane, and .demo/env
# puts kubectl on PATH with KUBECONFIG pointing at the stack's first cluster (.demo/kubeconfig).
# The Kubernetes provider plugin is linked into the demo's Pulumi home (.demo/pulumi-home/plugins).
# Real nodes are on (REAL_NODES=1, the default; make demo turns them off, saying why in one line,
# where they cannot run; REAL_NODES=0 from the user turns them off, and up says so in one line):
# the simulator backs the first DEMO_REAL_NODES nodes made with a real kubelet and containerd
# (--real-nodes-once: a slot freed is not given again, so every later node, a burst's or another
# stack's, is a KWOK node). The default, 3, is the dev cluster's first up: its standard node and
# its 2 preemptible ones, which docs/walkthrough.md's last step drills; on a machine with less
# than 2 cores or 1 GiB of memory available (a real node takes about 150 MiB) it is 1, the
# standard node, and up says why. The preemptible autoscaler runs on the standard node as a pod,
# deployed by the stack's PreemptibleAutoscaler from the image tools/images/build.sh built
# (.demo/env names it). With REAL_NODES=0 every node is a KWOK node,
# and the autoscaler runs as a local process for that cluster, inside its declared range
# (scripts/demo-autoscaler.sh; pid .demo/autoscaler.pid, log .demo/autoscaler.log); `down` stops
# it first.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
DEMO="$REPO/.demo"
PORT="${DEMO_SIM_PORT:-8787}"
STACK="${DEMO_STACK:-dev}"
SIM_URL="http://127.0.0.1:$PORT"
: "${TOGETHER_ENGINE_BIN:?run this through make demo (it builds the engine first)}"
: "${TOGETHER_K8S_PROVIDER_BIN:?run this through make demo (it builds the Kubernetes provider first)}"
KUBE_BIN="${TOGETHER_KUBE_BIN:-$(bash "$REPO/tools/kube/build.sh" --where)}"
REAL_NODES="${REAL_NODES:-1}"
DEMO_REAL_NODES="${DEMO_REAL_NODES:-}"
IMAGES_DIR=""
if [ "${1:-up}" != up ]; then
  REAL_NODES=0  # down: nothing to start
elif [ "$REAL_NODES" = 0 ]; then
  # Set by the user (make sets REAL_NODES_UNAVAILABLE too when it turned them off, having said why).
  [ -n "${REAL_NODES_UNAVAILABLE:-}" ] \
    || echo "real nodes are off by request (REAL_NODES=0): KWOK nodes only, the autoscaler runs as a local process"
else
  # The packages (make demo checked them already: instant), then the simulator's own check
  # (cgroups, the kubelet): where real nodes cannot run, one line says why and KWOK goes on.
  if ! bash "$REPO/scripts/node-deps.sh" --check; then
    REAL_NODES=0
  elif ! why="$("$REPO/.venv/bin/python" -c 'import sys; from pathlib import Path
from together_sim.nodes.pool import real_nodes_unavailable
print(real_nodes_unavailable(Path(sys.argv[1])))' "$KUBE_BIN")" || [ -n "$why" ]; then
    echo "real nodes are unavailable: ${why:-the check failed}; going on with KWOK nodes" >&2
    REAL_NODES=0
  fi
fi
if [ "$REAL_NODES" != 0 ]; then
  IMAGES_DIR="${TOGETHER_IMAGES_DIR:-$(bash "$REPO/tools/images/build.sh")}"
  if [ -z "$DEMO_REAL_NODES" ]; then
    # The dev cluster's 3 first nodes where the machine has room for them, else its standard
    # node alone (the autoscaler's), saying why.
    cores="$(nproc)"
    free_mib="$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)"
    if [ "$cores" -ge 2 ] && [ "${free_mib:-0}" -ge 1024 ]; then
      DEMO_REAL_NODES=3
    else
      DEMO_REAL_NODES=1
      echo "real nodes: only the standard node ($cores core(s), ${free_mib:-?} MiB available; the preemptible nodes need 2 cores and 1 GiB): they are KWOK nodes, which the drill of docs/walkthrough.md cannot drill"
    fi
  fi
fi

step() { printf '\n==> %s\n' "$*"; }
mkdir -p "$DEMO/state" "$DEMO/pulumi-home" "$DEMO/simulator"

# Where the Pulumi state lives: a file backend, or Pulumi's PostgreSQL backend (a table in a
# local server) to try what a team sharing one state database sees.
BACKEND="${DEMO_BACKEND:-$(cat "$DEMO/backend" 2>/dev/null || echo file)}"
case "$BACKEND" in
  file)
    BACKEND_URL="file://$DEMO/state"
    BACKEND_DESC="local file backend in .demo/state"
    ;;
  postgres)
    bash "$REPO/scripts/postgres.sh" start "$DEMO/postgres"
    BACKEND_URL="$(bash "$REPO/scripts/postgres.sh" url "$DEMO/postgres" pulumi_state)"
    BACKEND_DESC="PostgreSQL backend (table pulumi_state; server: scripts/postgres.sh ... .demo/postgres)"
    ;;
  *)
    echo "unknown DEMO_BACKEND '$BACKEND' (use file or postgres)" >&2
    exit 2
    ;;
esac
echo "$BACKEND" >"$DEMO/backend"

# The environment every later command needs; `source .demo/env` gives the same to your shell.
cat > "$DEMO/env" <<ENV
export PATH="$TOGETHER_ENGINE_BIN:$KUBE_BIN:$REPO/.venv/bin:\$PATH"
export KUBECONFIG="$DEMO/kubeconfig"
export PULUMI_HOME="$DEMO/pulumi-home"
export PULUMI_BACKEND_URL="$BACKEND_URL"
export PULUMI_CONFIG_PASSPHRASE="demo-passphrase"
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_CREDENTIAL_STORE=plaintext
export TOGETHER_API_KEY="sim-key"
export TOGETHER_BASE_URL="$SIM_URL"
export TOGETHER_TELEMETRY_DISABLED=1
export TOGETHER_DISABLE_VERSION_CHECK=1
export SIM="$SIM_URL"
ENV
# shellcheck source=/dev/null
source "$DEMO/env"

# The Kubernetes provider plugin goes into the demo's plugin cache, at the version the
# pulumi_kubernetes SDK asks for, as `pulumi plugin install resource kubernetes <version> --file`
# would put it (a link, not a copy): found there, the engine does not warn "using
# pulumi-resource-kubernetes from $PATH" on every run, as it does for a plugin on PATH.
K8S_VERSION="$("$REPO/.venv/bin/python" -c 'import importlib.metadata as m; print(m.version("pulumi_kubernetes"))')"
K8S_PLUGIN="$PULUMI_HOME/plugins/resource-kubernetes-v$K8S_VERSION"
mkdir -p "$K8S_PLUGIN"
ln -sfn "$TOGETHER_K8S_PROVIDER_BIN/pulumi-resource-kubernetes" "$K8S_PLUGIN/pulumi-resource-kubernetes"

sim_up() {
  curl -fsS -o /dev/null -H "Authorization: Bearer $TOGETHER_API_KEY" "$TOGETHER_BASE_URL/v1/compute/regions" 2>/dev/null
}

# The pid in FILE, if that process still runs and its command line matches the glob PATTERN (a
# pid can be reused once its process is gone).
pid_of() {  # pid_of FILE PATTERN
  local pid cmd
  pid="$(cat "$1" 2>/dev/null)" || return 1
  cmd="$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)" || return 1
  # shellcheck disable=SC2254
  case "$cmd" in
    $2) echo "$pid" ;;
    *) return 1 ;;
  esac
}

# The simulator this demo started, if it still runs: a together_sim on this state directory.
SIM_STATE="$DEMO/simulator"
sim_pid() { pid_of "$DEMO/simulator.pid" "*together_sim*--state-dir $SIM_STATE *"; }

# The simulator's control-plane processes (etcd, kube-apiserver, ...): every process whose
# command line names a file under the state directory's kube/ (they run in sessions of their own).
control_plane_pids() {
  local dir cmd
  for dir in /proc/[0-9]*; do
    cmd="$({ tr '\0' ' ' <"$dir/cmdline"; } 2>/dev/null)" || continue
    case "$cmd" in
      *together_sim*) ;;
      *"$SIM_STATE/kube/"*) [ "$(cut -d' ' -f3 "$dir/stat" 2>/dev/null)" = Z ] || echo "${dir#/proc/}" ;;
    esac
  done
  return 0
}

# Wait until none of the pids "$@" is alive, for at most $STOP_WAIT tenths of a second.
wait_gone() {
  local pid tries="$STOP_WAIT"
  while [ "$tries" -gt 0 ]; do
    for pid in "$@"; do
      [ -d "/proc/$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] && break
      pid=""
    done
    [ -z "$pid" ] && return 0
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
}
STOP_WAIT="${DEMO_STOP_WAIT_TENTHS:-600}"

start_simulator() {
  # A simulator of ours that is stopping answers 503 "stopping" (and then nothing) while it
  # stops its control planes: never adopt it, let it finish first.
  if sim_pid >/dev/null && ! sim_up; then
    echo "the previous simulator is still stopping; waiting for it to finish"
    stop_simulator --no-term
  fi
  if sim_up; then
    echo "simulator already running at $TOGETHER_BASE_URL"
    return
  fi
  step "starting the Together simulator on $SIM_URL (state: .demo/simulator, log: .demo/simulator.log)"
  # The key comes from the environment (TOGETHER_SIM_API_KEY), never the command line: any local
  # user can read a command line (ps), a process's environment only its owner.
  local real=()
  if [ "$REAL_NODES" != 0 ]; then
    real=(--real-nodes "$DEMO_REAL_NODES" --real-nodes-once --images "$IMAGES_DIR")
    echo "real nodes: the first $DEMO_REAL_NODES made (a kubelet and containerd each; later ones are KWOK nodes; REAL_NODES=0 for KWOK only)"
  fi
  TOGETHER_SIM_API_KEY="$TOGETHER_API_KEY" nohup "$REPO/.venv/bin/python" -m together_sim \
    --host 127.0.0.1 --port "$PORT" --state-dir "$SIM_STATE" \
    --time-scale 60 --admin --kubernetes "${real[@]}" \
    >"$DEMO/simulator.log" 2>&1 &
  echo $! >"$DEMO/simulator.pid"
  # Up to 30 s: with real nodes on a busy 2-core machine it has taken more than 10.
  for _ in $(seq 1 300); do
    sim_up && { echo "simulator ready (1 real second = 1 simulated minute)"; return; }
    sleep 0.1
  done
  echo "the simulator did not start; see .demo/simulator.log" >&2
  exit 1
}

# Stop the simulator and return only once it and every control-plane process are gone: SIGTERM
# (it stops its control planes and removes the files of deleted clusters), a bounded wait, then
# SIGKILL for whatever is left, saying so.
# --no-term: it was told to stop already (a second SIGTERM would cut its stop short).
stop_simulator() {
  local pid left
  if pid="$(sim_pid)"; then
    [ "${1:-}" = --no-term ] || kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid"; then
      echo "the simulator (pid $pid) did not stop within $((STOP_WAIT / 10)) s; killing it (SIGKILL)" >&2
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" || true
    fi
  fi
  # shellcheck disable=SC2207
  left=($(control_plane_pids))
  if [ "${#left[@]}" -gt 0 ] && ! wait_gone "${left[@]}"; then
    echo "control-plane processes ${left[*]} outlived the simulator; killing them (SIGKILL)" >&2
    kill -KILL "${left[@]}" 2>/dev/null || true
    wait_gone "${left[@]}" || true
  fi
  [ -n "${pid:-}" ] && echo "simulator stopped"
  rm -f "$DEMO/simulator.pid"
}

# The autoscaler this demo started (scripts/demo-autoscaler.sh, which runs the controller), and
# the controller itself: each pid checked against its command line, as the simulator's is.
AUTOSCALER="$REPO/scripts/demo-autoscaler.sh"
autoscaler_pid() { pid_of "$DEMO/autoscaler.pid" "*$AUTOSCALER*"; }
controller_pid() { pid_of "$DEMO/autoscaler-controller.pid" "*together_autoscaler*--kubeconfig $DEMO/kubeconfig *"; }

# The autoscaler as a pod (real nodes): the simulator's API where pods reach it (its log says),
# and the autoscaler's image; both go into .demo/env, where the stack program reads them.
AUTOSCALER_NS=together-autoscaler
pod_mode() { [ -n "${TOGETHER_DEMO_AUTOSCALER_IMAGE:-}" ]; }
use_pod_autoscaler() {
  local url image
  [ "$REAL_NODES" != 0 ] || return 0
  url="$(sed -n 's/^together_sim: pods on real nodes reach this API at \(http:[^ ]*\)$/\1/p' \
    "$DEMO/simulator.log" 2>/dev/null | tail -n1)"
  if [ -z "$url" ]; then
    echo "the running simulator has no real nodes (started before, or with REAL_NODES=0): the autoscaler runs as a local process; make demo-down first for real nodes"
    return 0
  fi
  image="$(awk '$1 == "autoscaler.tar" { print $2 }' "$IMAGES_DIR/images.txt")"
  [ -n "$image" ] || { echo "no autoscaler image in $IMAGES_DIR/images.txt" >&2; exit 1; }
  cat >>"$DEMO/env" <<ENV
export TOGETHER_DEMO_AUTOSCALER_IMAGE="$image"
export TOGETHER_DEMO_AUTOSCALER_BASE_URL="$url"
ENV
  export TOGETHER_DEMO_AUTOSCALER_IMAGE="$image" TOGETHER_DEMO_AUTOSCALER_BASE_URL="$url"
}

# Wait for the autoscaler's Deployment (pulumi up created it) to be available, and say where its
# logs and Events are.
show_pod_autoscaler() {
  local deployment
  step "the preemptible autoscaler runs as a pod on the real standard node (namespace $AUTOSCALER_NS)"
  deployment="$(kubectl -n "$AUTOSCALER_NS" get deployment -o name | head -n1)"
  if [ -z "$deployment" ]; then
    echo "no autoscaler Deployment: the stack declares no cluster with maxPreemptibleGpus"
    return 0
  fi
  kubectl -n "$AUTOSCALER_NS" rollout status "$deployment" --timeout=120s
  kubectl -n "$AUTOSCALER_NS" get pods -o wide
  echo "its log: kubectl -n $AUTOSCALER_NS logs $deployment"
}

start_autoscaler() {
  if pod_mode; then
    show_pod_autoscaler
    return
  fi
  if autoscaler_pid >/dev/null; then
    echo "autoscaler already running (log: .demo/autoscaler.log)"
    return
  fi
  step "starting the preemptible autoscaler for the stack's first cluster (log: .demo/autoscaler.log)"
  nohup bash "$AUTOSCALER" >"$DEMO/autoscaler.log" 2>&1 &
  echo $! >"$DEMO/autoscaler.pid"
  # Up once the script has read the range from the state (the controller then takes a few
  # seconds to start: its own line in the log says when it has read its cluster).
  for _ in $(seq 1 300); do
    if grep -q 'demo-autoscaler: controller for\|no autoscaler' "$DEMO/autoscaler.log"; then
      grep 'demo-autoscaler: ' "$DEMO/autoscaler.log" | tail -n1
      return
    fi
    sleep 0.1
  done
  echo "the autoscaler did not start within 30 s; see .demo/autoscaler.log:" >&2
  tail -n 20 "$DEMO/autoscaler.log" >&2
  exit 1
}

# Stop the autoscaler and return once it and its controller are gone (SIGTERM: the controller
# finishes its scan and gives its Lease up), SIGKILL after $STOP_WAIT tenths, saying so.
stop_autoscaler() {
  local pid child
  child="$(controller_pid)" || child=""
  if pid="$(autoscaler_pid)"; then
    kill -TERM "$pid" 2>/dev/null || true
  elif [ -n "$child" ]; then
    pid="$child"  # the script is gone but left its controller: stop that
    kill -TERM "$child" 2>/dev/null || true
  else
    rm -f "$DEMO/autoscaler.pid" "$DEMO/autoscaler-controller.pid"
    return 0
  fi
  # shellcheck disable=SC2086
  if ! wait_gone "$pid" $child; then
    echo "the autoscaler (pids $pid $child) did not stop within $((STOP_WAIT / 10)) s; killing it (SIGKILL)" >&2
    # shellcheck disable=SC2086
    kill -KILL "$pid" $child 2>/dev/null || true
    # shellcheck disable=SC2086
    wait_gone "$pid" $child || true
  fi
  echo "autoscaler stopped"
  rm -f "$DEMO/autoscaler.pid" "$DEMO/autoscaler-controller.pid"
}

case "${1:-up}" in
  up)
    start_simulator
    use_pod_autoscaler
    step "Pulumi: $BACKEND_DESC, stack '$STACK' (config: stacks/Pulumi.$STACK.yaml)"
    bash "$REPO/scripts/stack-config-status.sh" "$STACK"
    pulumi stack select "$STACK" --create --non-interactive >/dev/null
    step "pulumi up --yes  (creates the cluster, waits for Ready; the preemptible target fills in the background)"
    pulumi up --yes --non-interactive --skip-preview
    step "outputs"
    pulumi stack output
    # The first cluster's kubeconfig, where .demo/env's KUBECONFIG points (kubectl get nodes).
    # It holds the cluster's admin key: a new file, created 0600 (umask 077), which is also the
    # only mode `tg clusters get-credentials --file` writes into (docs/walkthrough.md).
    rm -f "$KUBECONFIG"
    (
      umask 077
      pulumi stack output --json --show-secrets | python3 -c '
import json, sys
outputs = json.load(sys.stdin)
configs = [v for k, v in sorted(outputs.items()) if k.endswith("_kubeconfig") and v]
print(configs[0] if configs else "", end="")' >"$KUBECONFIG"
    )
    step "Kubernetes: kubectl get nodes -L together.ai/compute-class  (KUBECONFIG=.demo/kubeconfig)"
    kubectl get nodes -L together.ai/compute-class
    start_autoscaler
    cat <<'NEXT'

Next steps (see docs/walkthrough.md, and docs/workloads.md for a reclaim in
Kubernetes):
  source .demo/env
  pulumi config set --path clusters.train.numPreemptibleGpus 24   # raise the floor of the target
  pulumi preview --diff                                             # one in-place update
  pulumi up --yes                                                   # exactly one PUT
  kubectl get nodes -L together.ai/compute-class                    # the cluster in Kubernetes
  git checkout stacks/Pulumi.dev.yaml && pulumi up --yes            # undo: the floor back to 16
  # docs/burst.md (from the committed config): a Job bursts the target, the autoscaler lowers it
  make demo-down                                                    # destroy and stop the simulator
NEXT
    ;;
  down)
    stop_autoscaler
    if sim_up || { start_simulator && true; }; then
      step "pulumi destroy --yes"
      pulumi stack select "$STACK" --non-interactive >/dev/null 2>&1 \
        && pulumi destroy --yes --non-interactive --skip-preview || echo "no '$STACK' stack to destroy"
    fi
    stop_simulator
    # The kubeconfigs of the clusters just destroyed: their keys, for control planes now gone.
    rm -f "$DEMO/kubeconfig" "$DEMO/sweep-kubeconfig"
    if [ "$BACKEND" = postgres ]; then
      bash "$REPO/scripts/postgres.sh" clean "$DEMO/postgres"
    fi
    rm -f "$DEMO/backend"
    bash "$REPO/scripts/stack-config-status.sh" "$STACK"
    ;;
  *)
    echo "usage: $0 up|down" >&2
    exit 2
    ;;
esac

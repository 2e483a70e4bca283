#!/usr/bin/env bash
# The demo's preemptible autoscaler: `python -m together_autoscaler` as a local process for the
# stack's first cluster (the one .demo/kubeconfig points at), because KWOK runs no containers.
# scripts/demo.sh up starts this script in the background (pid .demo/autoscaler.pid, log
# .demo/autoscaler.log); scripts/demo.sh down sends it SIGTERM, and it stops the controller
# (which gives its Lease up) and waits for it before it exits.
#
# On a real cluster the PreemptibleAutoscaler Deployment runs the controller, and a `pulumi up`
# that moves the Cluster's floor or ceiling rolls the Deployment with the new range. Here this
# script plays that part: it reads the range from the stack's state (the Cluster's applied
# num_preemptible_gpus and max_preemptible_gpus) each time the state changes, and restarts the
# controller with it. A cluster that declares no max_preemptible_gpus gets no controller.
# While the stack is locked (a `pulumi up`, refresh or destroy runs: the file backend's lock file
# exists) the controller is stopped, and it starts again once the lock is gone, with the range the
# state then holds: the controller of the old range never sees what the up PUTs (a raised floor's
# target, which it would lower again). Another backend's lock is not seen.
#
# The API key and base URL reach the controller through the environment (.demo/env), never its
# command line: any local user can read a command line (ps), a process's environment only its
# owner. Tunables (real seconds; the controller's clock is the machine's, not the simulator's):
#   DEMO_AUTOSCALER_SCAN_SECONDS      --scan-interval-seconds         (default 2)
#   DEMO_AUTOSCALER_UNNEEDED_SECONDS  --scale-down-unneeded-seconds   (default 20)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
REPO="$PWD"
DEMO="$REPO/.demo"
STACK="${DEMO_STACK:-dev}"
# shellcheck source=/dev/null
source "$DEMO/env"
SCAN="${DEMO_AUTOSCALER_SCAN_SECONDS:-2}"
UNNEEDED="${DEMO_AUTOSCALER_UNNEEDED_SECONDS:-20}"
PIDFILE="$DEMO/autoscaler-controller.pid"
MARK="$DEMO/autoscaler.seen"  # touched at each read of the state: a newer state file is news

say() { printf '%s demo-autoscaler: %s\n' "$(date -u +%FT%TZ)" "$*"; }

# "<cluster> <id> <floor> <ceiling>" of the stack's first Cluster (by name), or nothing when the
# stack has none; the ceiling is "-" when the cluster declares none.
applied_range() {
  pulumi stack export --stack "$STACK" 2>/dev/null | python3 -c '
import json, sys
try:
    resources = json.load(sys.stdin)["deployment"].get("resources") or []
except (ValueError, KeyError, TypeError):
    sys.exit(0)  # no stack yet, or a state being written: try again at the next change
clusters = sorted(
    (r for r in resources if r.get("type", "").endswith(":Cluster") and not r.get("delete")),
    key=lambda r: r["urn"].rsplit("::", 1)[1],
)
for r in clusters[:1]:
    given, out = r.get("inputs") or {}, r.get("outputs") or {}
    ceiling = given.get("max_preemptible_gpus", given.get("maxPreemptibleGpus"))
    floor = given.get("num_preemptible_gpus", given.get("numPreemptibleGpus", 0))
    cluster_id = out.get("cluster_id") or out.get("clusterId") or r.get("id")
    if cluster_id:
        print(r["urn"].rsplit("::", 1)[1], cluster_id, floor, "-" if ceiling is None else ceiling)
'
}

CHILD=""
stop_controller() {
  [ -n "$CHILD" ] || return 0
  kill -TERM "$CHILD" 2>/dev/null
  wait "$CHILD" 2>/dev/null
  say "controller (pid $CHILD) stopped"
  CHILD=""
  rm -f "$PIDFILE"
}

start_controller() {
  local name="$1" id="$2" floor="$3" ceiling="$4"
  if [ "$ceiling" = - ]; then
    say "cluster $name declares no maxPreemptibleGpus: no autoscaler (declare a range to get one)"
    return
  fi
  say "controller for cluster $name ($id): preemptible $floor-$ceiling GPUs, a scan every" \
    "$SCAN s, a node idle for $UNNEEDED s (real seconds) is scaled down"
  "$REPO/.venv/bin/python" -m together_autoscaler --cluster-id "$id" \
    --kubeconfig "$DEMO/kubeconfig" \
    --min-preemptible-gpus "$floor" --max-preemptible-gpus "$ceiling" \
    --scan-interval-seconds "$SCAN" --scale-down-unneeded-seconds "$UNNEEDED" \
    --metrics-port 0 2>&1 &
  CHILD=$!
  echo "$CHILD" >"$PIDFILE"
}

trap 'stop_controller; rm -f "$MARK"; say "stopped"; exit 0' TERM INT

# The file backend's checkpoint: a stat every half second sees a `pulumi up` land at once, so the
# controller never acts for long on a range the stack no longer declares. Another backend's state
# is read every 5 s, and so is the state after a controller exited by itself (a cluster gone).
find_state_file() {
  local file
  case "$PULUMI_BACKEND_URL" in
    file://*)
      for file in "${PULUMI_BACKEND_URL#file://}"/.pulumi/stacks/*/"$STACK".json; do
        [ -e "$file" ] && echo "$file" && return
      done
      ;;
  esac
}
# Whether the stack is locked: a lock file of the file backend, beside its state file
# (.pulumi/stacks/<project>/<stack>.json, .pulumi/locks/organization/<project>/<stack>/<id>.json).
stack_locked() {
  local file project
  [ -n "$STATE_FILE" ] || return 1
  project="$(basename "$(dirname "$STATE_FILE")")"
  for file in "${STATE_FILE%/.pulumi/stacks/*}/.pulumi/locks/organization/$project/$STACK"/*.json; do
    [ -e "$file" ] && return 0
  done
  return 1
}
STATE_FILE="$(find_state_file)"
rm -f "$MARK"
CURRENT=""
RESTART=1
TICKS=0
PAUSED=0
while :; do
  if stack_locked; then
    if [ "$PAUSED" = 0 ]; then
      say "stack $STACK is locked (a pulumi up, refresh or destroy runs): controller paused"
      stop_controller
      PAUSED=1
      RESTART=1  # once the lock is gone, whatever the range then is
    fi
    sleep 0.5 &
    wait $!
    continue
  fi
  due=0
  if [ "$PAUSED" = 1 ]; then
    say "stack $STACK unlocked: the controller starts again with the range in the state"
    PAUSED=0
    due=1
  fi
  [ -n "$STATE_FILE" ] && [ "$STATE_FILE" -nt "$MARK" ] && due=1
  if [ $((TICKS % 10)) -eq 0 ]; then
    [ -n "$STATE_FILE" ] || STATE_FILE="$(find_state_file)"
    { [ -z "$STATE_FILE" ] || [ "$RESTART" = 1 ]; } && due=1
  fi
  if [ "$due" = 1 ]; then
    touch "$MARK"
    NEXT="$(applied_range)"
    if [ "$NEXT" != "$CURRENT" ] || [ "$RESTART" = 1 ]; then
      stop_controller
      # shellcheck disable=SC2086
      [ -n "$NEXT" ] && start_controller $NEXT
      CURRENT="$NEXT"
      RESTART=0
    fi
  fi
  if [ -n "$CHILD" ] && ! kill -0 "$CHILD" 2>/dev/null; then
    wait "$CHILD" 2>/dev/null
    say "controller (pid $CHILD) exited with status $?; starting it again within 5 s"
    CHILD=""
    rm -f "$PIDFILE"
    RESTART=1
  fi
  TICKS=$((TICKS + 1))
  sleep 0.5 &
  wait $!
done

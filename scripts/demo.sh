#!/usr/bin/env bash
# The one-command demo: a real `pulumi up` of the dev stack against the local Together simulator.
#   scripts/demo.sh up     start the simulator (if needed), then `pulumi up` the dev stack
#   scripts/demo.sh down   destroy the dev stack and stop the simulator
# Everything it keeps lives in .demo/ (git-ignored). Run through `make demo` / `make demo-down`,
# which build the virtualenv and the engine first and pass TOGETHER_ENGINE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
DEMO="$REPO/.demo"
PORT="${DEMO_SIM_PORT:-8787}"
STACK="${DEMO_STACK:-dev}"
SIM_URL="http://127.0.0.1:$PORT"
: "${TOGETHER_ENGINE_BIN:?run this through make demo (it builds the engine first)}"

step() { printf '\n==> %s\n' "$*"; }
mkdir -p "$DEMO/state" "$DEMO/pulumi-home" "$DEMO/simulator"

# The environment every later command needs; `source .demo/env` gives the same to your shell.
cat > "$DEMO/env" <<ENV
export PATH="$TOGETHER_ENGINE_BIN:$REPO/.venv/bin:\$PATH"
export PULUMI_HOME="$DEMO/pulumi-home"
export PULUMI_BACKEND_URL="file://$DEMO/state"
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

sim_up() {
  curl -fsS -o /dev/null -H "Authorization: Bearer $TOGETHER_API_KEY" "$TOGETHER_BASE_URL/v1/compute/regions" 2>/dev/null
}

start_simulator() {
  if sim_up; then
    echo "simulator already running at $TOGETHER_BASE_URL"
    return
  fi
  step "starting the Together simulator on $SIM_URL (state: .demo/simulator, log: .demo/simulator.log)"
  nohup "$REPO/.venv/bin/python" -m together_sim \
    --host 127.0.0.1 --port "$PORT" --state-dir "$DEMO/simulator" \
    --api-key "$TOGETHER_API_KEY" --time-scale 60 --admin \
    >"$DEMO/simulator.log" 2>&1 &
  echo $! >"$DEMO/simulator.pid"
  for _ in $(seq 1 100); do
    sim_up && { echo "simulator ready (1 real second = 1 simulated minute)"; return; }
    sleep 0.1
  done
  echo "the simulator did not start; see .demo/simulator.log" >&2
  exit 1
}

stop_simulator() {
  if [ -f "$DEMO/simulator.pid" ] && kill "$(cat "$DEMO/simulator.pid")" 2>/dev/null; then
    echo "simulator stopped"
  fi
  rm -f "$DEMO/simulator.pid"
}

case "${1:-up}" in
  up)
    start_simulator
    step "Pulumi: local file backend in .demo/state, stack '$STACK' (config: stacks/Pulumi.$STACK.yaml)"
    pulumi stack select "$STACK" --create --non-interactive >/dev/null
    step "pulumi up --yes  (creates the cluster, waits for Ready; the preemptible target fills in the background)"
    pulumi up --yes --non-interactive --skip-preview
    step "outputs"
    pulumi stack output
    cat <<'NEXT'

Next steps (see the README walkthrough):
  source .demo/env
  pulumi config set --path clusters.train.numPreemptibleGpus 24   # raise the preemptible target
  pulumi preview --diff                                             # one in-place update
  pulumi up --yes                                                   # exactly one PUT
  make demo-down                                                    # destroy and stop the simulator
NEXT
    ;;
  down)
    if sim_up || { start_simulator && true; }; then
      step "pulumi destroy --yes"
      pulumi stack select "$STACK" --non-interactive >/dev/null 2>&1 \
        && pulumi destroy --yes --non-interactive --skip-preview || echo "no '$STACK' stack to destroy"
    fi
    stop_simulator
    ;;
  *)
    echo "usage: $0 up|down" >&2
    exit 2
    ;;
esac

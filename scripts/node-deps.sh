#!/usr/bin/env bash
# Install the Debian packages real nodes need (python -m together_sim --real-nodes N, and the
# images tools/images/build.sh builds), when any is missing; docs/dependencies.md says why each.
#
#   scripts/node-deps.sh            install what is missing (apt-get update once, then install)
#   scripts/node-deps.sh --check    install nothing: exit 0 when real nodes can run, else say why
#   scripts/node-deps.sh --decide UID HAS_APT [MISSING...]
#                                   print the decision for those facts (the tests' entry point)
#
# Exit 0: everything is present (quiet, instant). Exit 3: real nodes are unavailable here (not
# root, no apt-get, or the install failed); ONE line on stderr says why, and callers (make demo,
# make test) go on with KWOK nodes. Any other status is a usage error.
set -uo pipefail

UNAVAILABLE=3
# Package: what real nodes or the image build use it for (docs/dependencies.md has the same list).
PACKAGES=(
  containerd                  # each real node's own container runtime (ctr imports the images)
  runc                        # the OCI runtime containerd starts containers with (crun fails on hybrid cgroups)
  containernetworking-plugins # the pods' network: bridge, host-local, loopback, portmap (/usr/lib/cni)
  umoci                       # builds image layers into an OCI layout, with no registry
  skopeo                      # turns an OCI layout into the docker-archive tar ctr imports
  busybox-static              # a static shell and coreutils for the images
  iptables                    # the kubelet's and the CNI bridge's rules, inside each node's netns
  conntrack                   # clears stale connection-tracking entries (kubeadm's preflight requires it)
  iproute2                    # `ip`: each node's network namespace, veth and bridge
  buildah                     # builds Dockerfile.autoscaler daemonless from the local python image
  python3.11                  # the python image's interpreter and stdlib (Debian's, reproducible)
)

# Docker's containerd.io (Docker's packages, on GitHub's hosted runners among others) ships the
# containerd, ctr and runc commands and conflicts with Debian's containerd and runc: installing
# those would remove containerd.io, and Docker with it. Where it is installed, real nodes use its
# commands (each node runs a containerd of its own, with its own config and socket, beside
# Docker's), so those two packages are not asked for.
DOCKER_CONTAINERD=containerd.io
PROVIDED_BY_DOCKER=" containerd runc "

say_unavailable() { printf 'real nodes are unavailable: %s; going on with KWOK nodes\n' "$*" >&2; }

# The decision, pure: from the user id, whether apt-get exists, and the missing packages, print
# `ready`, `install PKG...` or `unavailable REASON` (real nodes run only as root: cgroups,
# network namespaces and mounts).
decide() {
  local uid="$1" has_apt="$2"
  shift 2
  if [ "$uid" != 0 ]; then
    if [ $# -eq 0 ]; then
      echo "unavailable not root (a kubelet needs root for cgroups, network namespaces and mounts)"
    else
      echo "unavailable not root, and missing Debian packages: $* (as root: apt-get install --no-install-recommends $*)"
    fi
  elif [ $# -eq 0 ]; then
    echo "ready"
  elif [ "$has_apt" != yes ]; then
    echo "unavailable no apt-get to install the missing packages: $* (real nodes need Debian's packages)"
  else
    echo "install $*"
  fi
}

# Whether the package $1 is installed, by dpkg's status (never, when there is no dpkg).
installed() {
  local status
  status="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" || status=""
  [ "$status" = "install ok installed" ]
}

# The packages of PACKAGES not installed; containerd and runc count as there when Docker's
# containerd.io is (above).
missing() {
  local package docker=no
  installed "$DOCKER_CONTAINERD" && docker=yes
  for package in "${PACKAGES[@]}"; do
    if [ "$docker" = yes ] && [[ "$PROVIDED_BY_DOCKER" == *" $package "* ]]; then
      continue
    fi
    installed "$package" || printf '%s\n' "$package"
  done
}

has_apt() { if command -v apt-get >/dev/null 2>&1; then echo yes; else echo no; fi; }

MODE="${1:-install}"
case "$MODE" in
  --decide)
    [ $# -ge 3 ] || { echo "usage: $0 --decide UID yes|no [MISSING...]" >&2; exit 2; }
    shift
    decide "$@"
    exit 0
    ;;
  install | --check) ;;
  *)
    echo "usage: $0 [--check | --decide UID yes|no [MISSING...]]" >&2
    exit 2
    ;;
esac

mapfile -t MISSING < <(missing)
read -r ACTION REST < <(decide "$(id -u)" "$(has_apt)" "${MISSING[@]}")
case "$ACTION" in
  ready) exit 0 ;;
  unavailable)
    say_unavailable "$REST"
    exit "$UNAVAILABLE"
    ;;
esac
if [ "$MODE" = --check ]; then
  say_unavailable "missing Debian packages: $REST (make engine installs them)"
  exit "$UNAVAILABLE"
fi
# install: one progress line, apt's output kept in a log named only when it fails.
LOG="${TMPDIR:-/tmp}/together-node-deps.log"
printf '[node-deps] installing Debian packages for real nodes (one-off): %s\n' "$REST" >&2
# shellcheck disable=SC2086  # REST is the package list, one word each
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends $REST; } >"$LOG" 2>&1; then
  say_unavailable "apt-get install $REST failed (log: $LOG)"
  exit "$UNAVAILABLE"
fi
mapfile -t MISSING < <(missing)
if [ "${#MISSING[@]}" -gt 0 ]; then
  say_unavailable "still missing after apt-get install: ${MISSING[*]} (log: $LOG)"
  exit "$UNAVAILABLE"
fi
rm -f "$LOG"

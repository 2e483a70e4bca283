#!/usr/bin/env bash
# Ensure the container images real nodes run exist, built locally with no registry and no pull,
# and print the directory that holds them (docs/kubernetes-sim.md, "Images"):
#
#   build.sh           build if needed (progress on stderr), then print the directory
#   build.sh --where   print the directory the images are (or would be) in; build nothing
#
# The directory holds one docker-archive tar per image (what `ctr -n k8s.io images import` and
# `docker load` take) and images.txt, one "<archive> <image name>" line per image:
#   pause.tar       localhost/together-pause:1               the pods' sandbox (pause/main.go)
#   python.tar      localhost/together-python:3.11           python3 + the worker library's wheel
#   autoscaler.tar  localhost/together-autoscaler:<version>  Dockerfile.autoscaler, built FROM
#                                                            the python image by buildah
# (the simulator's real nodes import every *.tar here; pause.tar is their sandbox image)
# umoci builds the first two into an OCI layout and skopeo writes each archive; buildah builds
# Dockerfile.autoscaler with BASE=localhost/together-python:3.11 in a throwaway storage of its
# own (vfs: no mount is left behind) and --isolation chroot. Cached OUTSIDE the repository like
# the Go tools (../lib.sh):
#   ${TOGETHER_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/images}/<key>/bin
# The key covers every input below, including the host's python3.11 and busybox binaries (a
# Debian update of either rebuilds) and the worker library's sources in worker/ (the code pods run
# with): the python image installs its wheel, built by scripts/worker-wheel.sh, as a user's
# image would (`pip install` of the wheel, here with the host's pip into the image's
# site-packages, since the image carries no pip).
# Needs root and the Debian packages of scripts/node-deps.sh (which make runs first).
set -euo pipefail

NAME="images"
CACHE_ENV=TOGETHER_IMAGES_CACHE
BUILD_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$BUILD_DIR/../.." && pwd)"
AUTOSCALER_VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO_DIR/pyproject.toml" | head -n1)"
PYTHON=/usr/bin/python3.11  # Debian's python3.11 package (scripts/node-deps.sh installs it)
BUSYBOX=/bin/busybox        # Debian's busybox-static: one static binary, a shell and coreutils
# pip runs inside the autoscaler's build from its own wheel (the python image carries no pip);
# the version pip itself is pinned at, since constraints.txt pins no installer.
PIP_VERSION="23.2.1"
VERSION="py3.11-autoscaler$AUTOSCALER_VERSION"
PAUSE_IMAGE="localhost/together-pause:1"
PYTHON_IMAGE="localhost/together-python:3.11"
AUTOSCALER_IMAGE="localhost/together-autoscaler:$AUTOSCALER_VERSION"
SITE_PACKAGES=/usr/local/lib/python3.11/dist-packages  # Debian python's site dir for local installs
# The packages of the repository the autoscaler image holds, and the worker library's
# distribution (its pyproject.toml, README and package) the python image installs.
PACKAGES=(together_facts together_api together_autoscaler worker)

# Every file the images are built from, relative to this directory (lib.sh hashes them).
repo_files() {
  local package
  (cd "$REPO_DIR" && for package in "${PACKAGES[@]}"; do
    find "$package" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' \
      ! -path 'worker/build/*'
  done) | LC_ALL=C sort | sed 's|^|../../|'
}
mapfile -t PACKAGE_FILES < <(repo_files)
INPUTS=(go.mod pause/main.go ../../Dockerfile.autoscaler ../../constraints.txt ../../pyproject.toml
  ../../scripts/worker-wheel.sh "${PACKAGE_FILES[@]}")
LIBC=/lib/x86_64-linux-gnu/libc.so.6  # stands for the glibc the images copy (Debian's libc6)
for host_binary in "$PYTHON" "$BUSYBOX" "$LIBC"; do
  [ -f "$host_binary" ] && INPUTS+=("$host_binary")
done

# Ours alone (no ON_PATH): nothing installs these images. No PROGRAMS: the archives and their list.
FILES=(pause.tar python.tar autoscaler.tar images.txt)

require_tools() {
  local tool missing=()
  for tool in umoci skopeo buildah; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [ -x "$PYTHON" ] || missing+=("$PYTHON")
  [ -x "$BUSYBOX" ] || missing+=("$BUSYBOX")
  [ "${#missing[@]}" -eq 0 ] || die "missing ${missing[*]}: run scripts/node-deps.sh as root (make engine does)"
  [ "$(id -u)" = 0 ] || die "building the images needs root (umoci keeps file owners, buildah runs as root)"
}

# image NAME REF ENTRYPOINT...: a one-layer image whose rootfs fill_NAME fills, as an archive.
image() {
  local name="$1" ref="$2" bundle="$WORK/bundle-$1" args=() arg
  shift 2
  umoci new --image "$WORK/oci:$name"
  umoci unpack --image "$WORK/oci:$name" "$bundle" >/dev/null
  "fill_$name" "$bundle/rootfs"
  umoci repack --image "$WORK/oci:$name" "$bundle"
  for arg in "$@"; do args+=(--config.entrypoint "$arg"); done
  umoci config --image "$WORK/oci:$name" "${args[@]}" \
    --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.env LANG=C.UTF-8
  skopeo --policy "$WORK/policy.json" copy --quiet "oci:$WORK/oci:$name" \
    "docker-archive:$STAGE/$name.tar:$ref"
  rm -rf "$bundle"
  say "$ref: $(du -h "$STAGE/$name.tar" | cut -f1)"
}

fill_pause() {
  install -m 0755 "$WORK/pause" "$1/pause"
}

# Busybox and its applets in /bin, a root and a nonroot (65532) user, a /tmp.
fill_busybox() {
  local applet
  mkdir -p "$1/bin" "$1/etc" "$1/tmp" "$1/root"
  chmod 1777 "$1/tmp"
  install -m 0755 "$BUSYBOX" "$1/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ -e "$1/bin/$applet" ] || ln -s busybox "$1/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/tmp:/bin/sh\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$1/etc/group"
}

# Copy every shared library `ldd` names for the binaries "$@" (host paths) into the rootfs $ROOT.
copy_libraries() {
  local binary lib
  for binary in "$@"; do
    for lib in $(ldd "$binary" 2>/dev/null | grep -o '/[^ ]*'); do
      [ -e "$ROOT$lib" ] && continue
      mkdir -p "$ROOT$(dirname "$lib")"
      cp -L "$lib" "$ROOT$lib"
    done
  done
}

# The libraries a manylinux wheel may link without shipping them (the manylinux2014 policy's
# list, less X11 and GL): the autoscaler's compiled wheels (msgspec needs libpthread.so.0) and a
# user's find them here as they would in the public python image.
MANYLINUX_LIBS=(libc.so.6 libm.so.6 libdl.so.2 librt.so.1 libpthread.so.0 libutil.so.1
  libresolv.so.2 libnsl.so.1 libcrypt.so.1 libgcc_s.so.1 libstdc++.so.6)
copy_manylinux_libraries() {
  local lib path
  for lib in "${MANYLINUX_LIBS[@]}"; do
    # awk reads to the end: leaving early would SIGPIPE ldconfig, a failure under pipefail
    path="$(/sbin/ldconfig -p | awk -v lib="$lib" '$1 == lib && /x86-64/ && !found { print $NF; found = 1 }')"
    [ -n "$path" ] || die "no $lib on this host (ldconfig -p): the python image needs it"
    mkdir -p "$ROOT$(dirname "$path")"
    [ -e "$ROOT$path" ] || cp -L "$path" "$ROOT$path"
  done
}

# Debian's python3.11 and its stdlib without tests, IDLE, Tk, ensurepip, build files, bytecode
# or Debian's EXTERNALLY-MANAGED marker (this image has no apt whose packages pip could break),
# the libraries ldd names for it and its extension modules and those of MANYLINUX_LIBS, busybox for a shell, and the
# worker library's wheel installed into site-packages (its package and its dist-info).
fill_python() {
  ROOT="$1"
  fill_busybox "$ROOT"
  mkdir -p "$ROOT/usr/bin" "$ROOT$SITE_PACKAGES"
  install -m 0755 "$PYTHON" "$ROOT/usr/bin/python3.11"
  ln -s python3.11 "$ROOT/usr/bin/python3"
  ln -s python3.11 "$ROOT/usr/bin/python"  # what images FROM the public python image call
  tar -C / -cf - \
    --exclude=usr/lib/python3.11/test --exclude='usr/lib/python3.11/*/tests' \
    --exclude='usr/lib/python3.11/*/test' --exclude=usr/lib/python3.11/idlelib \
    --exclude=usr/lib/python3.11/tkinter --exclude=usr/lib/python3.11/turtledemo \
    --exclude=usr/lib/python3.11/ensurepip --exclude='usr/lib/python3.11/config-*' \
    --exclude='usr/lib/python3.11/lib-dynload/_tkinter*' \
    --exclude=usr/lib/python3.11/EXTERNALLY-MANAGED --exclude=__pycache__ \
    usr/lib/python3.11 | tar -C "$ROOT" -xf -
  copy_libraries "$PYTHON" "$ROOT"/usr/lib/python3.11/lib-dynload/*.so
  copy_manylinux_libraries
  local wheel
  wheel="$(PIP="$PIP" "$REPO_DIR/scripts/worker-wheel.sh" "$WORK/wheels")" \
    || die "could not build the worker library's wheel (scripts/worker-wheel.sh)"
  "$PIP" install --quiet --disable-pip-version-check --no-index --no-deps --no-compile \
    --target "$ROOT$SITE_PACKAGES" "$wheel" >&2 || die "pip could not install $wheel into the python image"
  say "the python image installs $(basename "$wheel")"
  "$PYTHON" -I - "$ROOT" <<'PY'
import sys
from pathlib import Path

root = Path(sys.argv[1])
left = [p for p in root.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]
if left:
    sys.exit(f"bytecode in the python image: {left[:3]}")
PY
}

# Dockerfile.autoscaler, FROM the python image: a context of exactly what it copies, plus the
# wheels pip downloads here on the host for the python image's interpreter (cp311, manylinux
# x86_64), pip's own among them. Why not pip install from the index inside the build: the python
# image has no pip (no ensurepip), and a download on the host keeps the build itself offline
# and uses pip's cache on the host.
autoscaler() {
  local context="$WORK/autoscaler" storage store
  mkdir -p "$context/wheels"
  cp "$REPO_DIR/Dockerfile.autoscaler" "$REPO_DIR/constraints.txt" "$context/"
  (cd "$REPO_DIR" && tar -cf - --exclude=__pycache__ --exclude='*.pyc' together_facts together_api together_autoscaler) \
    | tar -C "$context" -xf -
  say "downloading the autoscaler's wheels (pip, at constraints.txt's versions)"
  "$PIP" download --quiet --disable-pip-version-check --dest "$context/wheels" \
    --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 --platform linux_x86_64 \
    -c "$REPO_DIR/constraints.txt" "pip==$PIP_VERSION" \
    httpx pydantic lightkube prometheus-client >&2 \
    || die "pip download of the autoscaler's dependencies failed (is the package index reachable?)"
  storage="$WORK/storage"
  store="containers-storage:[vfs@$storage/root+$storage/run]"
  skopeo --policy "$WORK/policy.json" copy --quiet \
    "docker-archive:$STAGE/python.tar" "$store$PYTHON_IMAGE"
  BUILDAH=(buildah --root "$storage/root" --runroot "$storage/run" --storage-driver vfs)
  "${BUILDAH[@]}" bud --quiet --pull=never --isolation chroot \
    --signature-policy "$WORK/policy.json" --build-arg "BASE=$PYTHON_IMAGE" \
    -f "$context/Dockerfile.autoscaler" -t "$AUTOSCALER_IMAGE" "$context" >/dev/null
  "${BUILDAH[@]}" push --quiet --signature-policy "$WORK/policy.json" \
    "$AUTOSCALER_IMAGE" "docker-archive:$STAGE/autoscaler.tar:$AUTOSCALER_IMAGE"
  "${BUILDAH[@]}" rmi --all --force >/dev/null
  say "$AUTOSCALER_IMAGE: $(du -h "$STAGE/autoscaler.tar" | cut -f1)"
}

build() {
  STAGE="$1"
  WORK="$STAGE/.work"
  require_tools
  require_go "the pause image"
  PIP="${TOGETHER_IMAGES_PIP:-$REPO_DIR/.venv/bin/pip}"
  [ -x "$PIP" ] || PIP="$(command -v pip3 || true)"
  [ -n "$PIP" ] || die "no pip to download the autoscaler's wheels: run make venv"
  [ -n "$AUTOSCALER_VERSION" ] || die "no version = \"...\" in pyproject.toml"
  mkdir -p "$WORK"
  # No registry, nothing signed: every image here is built here.
  printf '{"default": [{"type": "insecureAcceptAnything"}]}\n' >"$WORK/policy.json"
  say "building $PAUSE_IMAGE, $PYTHON_IMAGE and $AUTOSCALER_IMAGE (no registry)"
  go build -trimpath -ldflags "-s -w" -o "$WORK/pause" ./pause
  umoci init --layout "$WORK/oci"
  image pause "$PAUSE_IMAGE" /pause
  image python "$PYTHON_IMAGE" /usr/bin/python3
  autoscaler
  printf '%s %s\n' pause.tar "$PAUSE_IMAGE" python.tar "$PYTHON_IMAGE" \
    autoscaler.tar "$AUTOSCALER_IMAGE" >"$STAGE/images.txt"
  rm -rf "$WORK"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"

#!/usr/bin/env bash
# Ensure the Debian 12 VM image the VM tests boot exists (a cgroup v2 host with systemd, with
# everything real nodes need), and print the directory that holds it (docs/kubernetes-sim.md,
# "Real nodes on a cgroup v2 host with systemd"):
#
#   build.sh           build if needed (progress on stderr), then print the directory
#   build.sh --where   print the directory the image is (or would be) in; build nothing
#
# The directory holds:
#   disk.img     a raw ext4 root filesystem (sparse); testkit/vm.py boots it with -snapshot, so it
#                is never written
#   vmlinuz      the image's own kernel (Debian's linux-image-amd64), booted with -kernel
#   initrd.img   its initramfs
#   packages.txt the image's packages and versions (dpkg-query), for the record
# The image is Debian bookworm from the mirrors the host's apt already uses (its sources files are
# pasted into the image: nothing else is downloaded, and no mirror is named here), built with
# mmdebstrap's minbase variant plus systemd as init, the kernel, udev, iproute2, kmod, the shared
# libraries the host's pyenv Python links (the tests run the checkout's .venv inside the guest),
# openssl (the simulator's certificates) and every package scripts/node-deps.sh lists, all
# installed at build time: the guest has no network. Its one service of ours,
# together-vm-job.service, mounts the 9p share tagged "job" and runs the script testkit/vm.py put
# there (the runner's logic lives in the checkout, so changing it rebuilds nothing).
# Cached OUTSIDE the repository like the Go tools (../lib.sh):
#   ${TOGETHER_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/vm}/<key>/bin
# The key covers this script, scripts/node-deps.sh (its package list) and the host's apt sources.
# Needs root; installs qemu-system-x86, mmdebstrap and e2fsprogs with apt-get when missing.
set -euo pipefail

NAME="vm"
CACHE_ENV=TOGETHER_VM_CACHE
VERSION="bookworm"
DISK_SIZE="8G"  # sparse: the root filesystem is about 1.4 GB, the rest room for the guest's runs
# What the image needs beyond minbase, and why (node-deps.sh's packages are added below):
BASE_PACKAGES=(
  systemd-sysv linux-image-amd64 udev kmod iproute2 # a booting systemd host with modules and `ip`
  mount util-linux procps openssl                  # mount (9p shares), nsenter, ps, certificates
  dbus                                             # systemctl and systemd-run talk to systemd over it
  # the shared libraries the host's pyenv Python and its lib-dynload modules link
  libssl3 libffi8 libsqlite3-0 libbz2-1.0 liblzma5 libreadline8 libncursesw6 libgdbm6
  libgdbm-compat4 libexpat1 libnsl2 libtirpc3 libuuid1 zlib1g
)

# The host's enabled apt sources files (one-line or deb822): the image uses the same mirrors.
apt_sources() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$file" ] && printf '%s\n' "$file"
  done
  return 0
}
mapfile -t SOURCES < <(apt_sources)
INPUTS=(../../scripts/node-deps.sh "${SOURCES[@]}")

# The package names of node-deps.sh's PACKAGES=( ... ) list, one per line.
node_packages() {
  sed -n '/^PACKAGES=(/,/^)/{/^PACKAGES=(/d;/^)/d;s/#.*//;p}' "$HERE/../../scripts/node-deps.sh" \
    | tr -s ' \t' '\n' | sed '/^$/d'
}

# Ours alone (no ON_PATH): nothing installs this image. No PROGRAMS: the disk, its kernel and
# initramfs, and the list of its packages.
FILES=(disk.img vmlinuz initrd.img packages.txt)

# qemu-system-x86 (runs the VM), mmdebstrap (builds its root filesystem) and e2fsprogs
# (mkfs.ext4 -d makes the disk from it), installed when missing.
require_tools() {
  local missing=()
  command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "missing ${missing[*]}: as root, apt-get install --no-install-recommends ${missing[*]}"
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get to install them: the VM image is built on a Debian host"
  say "installing ${missing[*]} (one-off)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"; } >/dev/null \
    || die "apt-get install ${missing[*]} failed: run it as root and re-run"
}

# The files the image carries beyond its packages, written into the root filesystem $1.
configure() {
  local root="$1"
  printf 'together-vm\n' >"$root/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 together-vm\n' >"$root/etc/hosts"
  sed -i 's/^root:[^:]*:/root::/' "$root/etc/shadow"  # a console login for debugging, no password
  : >"$root/etc/machine-id"                             # made at each boot
  cat >"$root/usr/local/sbin/together-vm-job" <<'EOF'
#!/bin/sh
# Mount the runner's share (tag "job", testkit/vm.py) and run its script; power off if there is none.
mkdir -p /run/together-vm-job
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 job /run/together-vm-job \
  && [ -f /run/together-vm-job/guest.sh ]; then
  exec /bin/sh /run/together-vm-job/guest.sh
fi
echo "together-vm-job: no 9p share tagged job with a guest.sh: nothing to run" >/dev/ttyS0
systemctl --no-block poweroff
EOF
  chmod 0755 "$root/usr/local/sbin/together-vm-job"
  cat >"$root/etc/systemd/system/together-vm-job.service" <<'EOF'
[Unit]
Description=The VM test runner's command (testkit/vm.py)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/together-vm-job
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
[Install]
WantedBy=multi-user.target
EOF
  ln -sf /etc/systemd/system/together-vm-job.service \
    "$root/etc/systemd/system/multi-user.target.wants/together-vm-job.service"
  # Debian's containerd package enables a system containerd: the simulator runs its own per node,
  # and under emulation an idle one only costs boot time. A test that wants it starts it.
  rm -f "$root/etc/systemd/system/multi-user.target.wants/containerd.service"
  # Nothing in the guest waits on a network or a timer's housekeeping.
  rm -f "$root"/etc/systemd/system/timers.target.wants/*.timer
}

build() {
  local stage="$1" rootfs packages
  require_tools
  [ "$(id -u)" = 0 ] || die "building the VM image needs root (mmdebstrap installs packages as root; mkfs.ext4 keeps owners)"
  [ "${#SOURCES[@]}" -gt 0 ] || die "the host has no apt sources (/etc/apt/sources.list*): the image uses the host's Debian mirrors"
  mapfile -t packages < <(node_packages)
  [ "${#packages[@]}" -gt 0 ] || die "found no PACKAGES=( ... ) list in scripts/node-deps.sh"
  rootfs="$stage/.rootfs"
  say "building Debian $VERSION with systemd and the real-node packages (${packages[*]})"
  mmdebstrap --quiet --variant=minbase \
    --include="$(IFS=,; echo "${BASE_PACKAGES[*]},${packages[*]}")" \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    "$VERSION" "$rootfs" "${SOURCES[@]}"
  configure "$rootfs"
  chroot "$rootfs" dpkg-query -W -f='${Package} ${Version}\n' >"$stage/packages.txt"
  cp "$(find "$rootfs/boot" -name 'vmlinuz-*' | sort | tail -n1)" "$stage/vmlinuz"
  cp "$(find "$rootfs/boot" -name 'initrd.img-*' | sort | tail -n1)" "$stage/initrd.img"
  rm -rf "$rootfs/var/cache/apt/archives"/*.deb "$rootfs/var/lib/apt/lists"/*_Packages
  mkfs.ext4 -q -F -L together-vm -d "$rootfs" "$stage/disk.img" "$DISK_SIZE"
  rm -rf "$rootfs"
  say "image: $(du -h "$stage/disk.img" | cut -f1) used of $DISK_SIZE, $(wc -l <"$stage/packages.txt") packages"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"

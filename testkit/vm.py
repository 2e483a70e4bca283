"""Boot the Debian 12 VM image of ``tools/vm/build.sh`` (a cgroup v2 host with systemd), run one
command inside it, and read back its output and exit status (:func:`run_in_vm`)."""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from testkit.builds import where
from together_sim.host.processes import die_with_parent

__all__ = [
    "ACCEL_ENV",
    "VmResult",
    "accelerator",
    "image_dir",
    "python_share",
    "run_in_vm",
    "vm_unavailable",
]

REPO = Path(__file__).resolve().parent.parent
QEMU = "qemu-system-x86_64"
ACCEL_ENV = "TOGETHER_VM_ACCEL"
KVM_PROBE_SECONDS = 20.0
"""A KVM boot that works reaches the kernel's panic (no root filesystem) in about a second."""
GUEST_JOB = "/run/together-vm-job"
"""Where the image's service mounts the ``job`` share (tools/vm/build.sh)."""
_9P = "trans=virtio,version=9p2000.L,msize=524288"

GUEST_SCRIPT = f"""#!/bin/sh
# Written by testkit/vm.py: mount the read-only shares, run the command, write its status.
J={GUEST_JOB}
while read -r tag path; do
  mkdir -p "$path" && mount -t 9p -o {_9P},cache=loose,ro "$tag" "$path" \\
    || echo "together-vm-job: could not mount the share $tag at $path" >>"$J/output"
done <"$J/mounts"
echo "together-vm-job: running the command" >/dev/ttyS0
(set -a; . "$J/env"; set +a; cd "$(cat "$J/cwd")" && exec /bin/sh "$J/command") \\
  >>"$J/output" 2>&1 </dev/null
echo $? >"$J/status.tmp" && mv "$J/status.tmp" "$J/status"
sync
echo "together-vm-job: done, powering off" >/dev/ttyS0
systemctl --no-block poweroff
"""


@dataclass(frozen=True)
class VmResult:
    """What a command run in the guest gave: its exit status and output (stdout and stderr, in
    order), the guest's console (boot and shutdown), the accelerator and the wall seconds from
    QEMU's start to its exit."""

    returncode: int
    output: str
    console: str
    accel: str
    seconds: float


def image_dir() -> Path:
    """Where ``tools/vm/build.sh`` keeps (or would keep) the image: ``--where``, builds nothing."""
    return where("vm")


def vm_unavailable(image: Path | None = None) -> str:
    """Why the VM cannot boot here ("" when it can), with the fix."""
    if shutil.which(QEMU) is None:
        return f"no {QEMU}: run tools/vm/build.sh as root (it installs qemu-system-x86)"
    image = image or image_dir()
    if not all((image / f).is_file() for f in ("disk.img", "vmlinuz", "initrd.img")):
        return f"the VM image is not built ({image}): run tools/vm/build.sh as root"
    if os.geteuid() != 0:
        return "the VM's writable 9p share needs root (its files are the guest root's)"
    return ""


def python_share() -> Path:
    """The installation the checkout's .venv runs on (the host's pyenv Python): shared at the
    same path, so the venv's interpreter link resolves in the guest."""
    return Path(sys.base_prefix)


@functools.cache
def accelerator(image: Path) -> str:
    """``kvm`` when ``TOGETHER_VM_ACCEL`` says so or a probe boot of the image's kernel under
    KVM reaches its panic (no root filesystem) within :data:`KVM_PROBE_SECONDS`, else ``tcg``."""
    chosen = os.environ.get(ACCEL_ENV, "")
    if chosen in ("kvm", "tcg"):
        return chosen
    if chosen:
        raise ValueError(f"{ACCEL_ENV}={chosen!r}: give kvm or tcg (or leave it unset to probe)")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    with tempfile.TemporaryDirectory(prefix="together-vm-probe-") as tmp:
        console = Path(tmp) / "console.log"
        args = [
            QEMU, "-accel", "kvm", "-cpu", "host", "-m", "256", "-display", "none",
            "-no-reboot", "-nodefaults", "-monitor", "none", "-serial", f"file:{console}",
            "-kernel", str(image / "vmlinuz"),
            "-append", "console=ttyS0 panic=-1 root=/dev/nonexistent",
        ]  # fmt: skip
        with _qemu(args, Path(tmp)) as proc:
            try:
                proc.wait(KVM_PROBE_SECONDS)
            except subprocess.TimeoutExpired:
                return "tcg"
        return "kvm" if "Kernel panic" in console.read_text(errors="replace") else "tcg"


@contextlib.contextmanager
def _qemu(args: Sequence[str], tmpdir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """QEMU started in a session of its own, dying with this thread (``PR_SET_PDEATHSIG``), and
    killed when the block ends however it ends."""
    env = {**os.environ, "TMPDIR": str(tmpdir)}  # -snapshot's temporary disk goes there
    proc = subprocess.Popen(
        list(args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(tmpdir / "qemu.log").open("wb"),
        start_new_session=True,
        preexec_fn=die_with_parent,
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_in_vm(
    command: str,
    *,
    shares: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    timeout: float = 900.0,
    memory_mib: int = 4096,
    cpus: int = 2,
    image: Path | None = None,
) -> VmResult:
    """Boot the image, run ``command`` (a ``/bin/sh`` script) as root in ``cwd``, with ``env``
    (nothing else of the host's environment), and return its status and output.

    The checkout, the Python it runs on (the host's pyenv, glibc-compatible with bookworm) and
    the built binaries are shared read-only over 9p at the SAME paths, so the host's ``.venv``
    runs in the guest unchanged. A writable share (tag ``job``) carries the command in and its
    output and exit status out: the image's ``together-vm-job.service`` runs ``guest.sh`` from
    it once systemd is up, then powers the guest off. The disk is booted with ``snapshot=on``:
    the image is never written, the guest's writes go to a temporary file of QEMU's in the
    run's directory. KVM is used when a probe proves it works (:func:`accelerator`), TCG
    otherwise. However this ends (a timeout, an error, an interrupted test), the QEMU process is
    killed and the run's directory removed.

    The checkout and :func:`python_share` are always shared read-only, with ``shares`` (more
    host directories: the built binaries) at the same paths. ``PYTHONDONTWRITEBYTECODE`` is set:
    the shares are read-only. Raises ``TimeoutError`` (with the console's and the output's last
    lines) when the guest is not off within ``timeout`` seconds, and ``RuntimeError`` when it
    powered off without running the command."""
    image = image or image_dir()
    if why := vm_unavailable(image):
        raise RuntimeError(why)
    accel = accelerator(image)
    run = Path(tempfile.mkdtemp(prefix="together-vm-"))
    try:
        job = run / "job"
        job.mkdir()
        ro = list(dict.fromkeys([REPO, python_share(), *(p.resolve() for p in shares)]))
        (job / "mounts").write_text("".join(f"ro{i} {p}\n" for i, p in enumerate(ro)))
        environment = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(env or {}),
        }
        (job / "env").write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in environment.items()))
        (job / "cwd").write_text(f"{cwd}\n")
        (job / "command").write_text(command + "\n")
        (job / "guest.sh").write_text(GUEST_SCRIPT)
        (job / "output").write_text("")
        console = run / "console.log"
        args = [
            QEMU, "-accel", accel, "-cpu", "host" if accel == "kvm" else "max",
            "-m", str(memory_mib), "-smp", str(cpus), "-display", "none", "-no-reboot",
            "-nodefaults", "-monitor", "none", "-serial", f"file:{console}",
            "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"),
            "-append", "root=/dev/vda rw console=ttyS0 quiet panic=-1",
            "-drive", f"file={image / 'disk.img'},format=raw,if=virtio,snapshot=on",
            "-nic", "none",
            "-virtfs", f"local,path={job},mount_tag=job,security_model=none",
        ]  # fmt: skip
        for i, path in enumerate(ro):
            share = f"local,path={path},mount_tag=ro{i},security_model=none,readonly=on"
            args += ["-virtfs", share]
        start = time.monotonic()
        with _qemu(args, run) as proc:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                raise TimeoutError(
                    f"the VM ({accel}) was still running after {timeout:.0f} s; console:\n"
                    f"{_tail(console)}\noutput:\n{_tail(job / 'output')}"
                ) from None
        seconds = time.monotonic() - start
        status = job / "status"
        if not status.is_file():
            raise RuntimeError(
                f"the VM ({accel}) powered off without running the command (QEMU exit "
                f"{proc.returncode}: {_tail(run / 'qemu.log')}); console:\n{_tail(console)}"
            )
        return VmResult(
            returncode=int(status.read_text().strip()),
            output=(job / "output").read_text(errors="replace"),
            console=console.read_text(errors="replace"),
            accel=accel,
            seconds=seconds,
        )
    finally:
        shutil.rmtree(run, ignore_errors=True)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


def probe() -> str:
    """Why this host cannot boot the VM and run a command in it ("" when it can): what
    ``.ci/run`` asks before it runs ``make test-vm``. Builds nothing: run tools/vm/build.sh
    first."""
    try:
        image = image_dir()
        if why := vm_unavailable(image):
            return why
        result = run_in_vm("true", image=image, timeout=600)
    except (OSError, RuntimeError, TimeoutError, ValueError) as error:
        return str(error).splitlines()[0]
    return "" if result.returncode == 0 else f"`true` exited {result.returncode} in the VM"


if __name__ == "__main__":
    if sys.argv[1:] != ["probe"]:
        sys.exit("usage: python -m testkit.vm probe")
    reason = probe()
    print(f"the VM cannot run here: {reason}" if reason else "the VM boots here", file=sys.stderr)
    sys.exit(3 if reason else 0)

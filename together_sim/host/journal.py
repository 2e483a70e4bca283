"""The journal of host changes: each change a real node or its pool makes to the host is written
down before it is made, and one owner undoes it, last first, whatever killed the simulator."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from together_sim.host import cgroups, mounts, processes, shared, sysctls, systemd

__all__ = ["Change", "Journal", "Owner", "Undone", "sweep"]


_POOL_GLOB: Final = "pool-*.jsonl"
_PROCESS_WAIT: Final = 5.0

log = logging.getLogger(__name__)
_journal_locks: dict[Path, threading.Lock] = {}
_journal_locks_guard = threading.Lock()
_sequence = itertools.count(1)


@dataclass(frozen=True)
class Owner:
    """A process as pid and start time: a pid alone may belong to a later process by now."""

    pid: int
    started: int | None

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), processes.process_started(os.getpid()))

    def alive(self) -> bool:
        """The same process (pid and start time) runs: a zombie does not (killed, its parent
        has not reaped it yet), so its nodes are swept at once."""
        return self.started is not None and processes.runs(self.pid, self.started)


@dataclass(frozen=True)
class Change:
    """One entry: what was (about to be) made, enough to undo it with no other knowledge."""

    seq: int
    kind: str
    args: dict[str, Any]

    def describe(self) -> str:
        return f"{self.kind} " + " ".join(str(v) for v in self.args.values())


@dataclass
class Undone:
    """What an undo did: ``removed`` (every change undone, or found already gone) and ``left``
    (what is still on the host; its entries stay in the journal for the next sweep)."""

    removed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def add(self, other: Undone) -> None:
        self.removed += other.removed
        self.left += other.left


class Journal:
    """An append-only file of :class:`Change` entries under ``/run/together-sim/journals``, its
    first line naming its owner (pid and start time).

    The same :meth:`undo` serves a node's delete, the pool's close and the sweep of a dead
    simulator's journals (``python -m together_sim cleanup``). Why a file, before the change: a
    simulator killed with SIGKILL runs no code, so what it made must be readable by another
    process, and a change made before it is written down would be lost by a kill between the
    two. An undo of a change never made (the kill came between the entry and the change) finds
    nothing and succeeds: every undo is idempotent. Why ``/run``: a tmpfs, so a reboot clears the
    journals with every change they name (namespaces, links, cgroups, mounts, processes)."""

    def __init__(self, path: Path, owner: Owner) -> None:
        self.path = path
        self.owner = owner
        self._seq = 0

    @classmethod
    def create(cls, path: Path, owner: Owner | None = None) -> Journal:
        owner = owner or Owner.me()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        header = json.dumps({"owner": {"pid": owner.pid, "started": owner.started}})
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(header + "\n")
            out.flush()
            os.fsync(out.fileno())
        return cls(path, owner)

    @classmethod
    def load(cls, path: Path) -> Journal:
        """The journal at ``path`` (an unreadable header: an owner that is never alive)."""
        try:
            first = path.read_text().split("\n", 1)[0]
            raw = json.loads(first)["owner"]
            owner = Owner(int(raw["pid"]), raw["started"])
        except (OSError, ValueError, KeyError, TypeError):
            owner = Owner(-1, None)
        journal = cls(path, owner)
        journal._seq = max((c.seq for c in journal.changes()), default=0)
        return journal

    def new_child(self, name: str) -> Journal:
        """A journal for a node of this pool, named here (``journal`` entry) before it exists."""
        path = self.path.with_name(f"{self.path.stem}.{name}-{next(_sequence)}.jsonl")
        self.record("journal", path=str(path))
        return Journal.create(path, self.owner)

    def record(self, kind: str, **args: Any) -> Change:
        """Append a change, durably, before the caller makes it. Its arguments are checked
        against the undo that will read them back, now: a wrong name would otherwise fail at
        the undo, in another process, after the one that wrote it is gone."""
        _check_undo_args(kind, args)
        with _lock_of(self.path):
            self._seq += 1
            change = Change(self._seq, kind, args)
            line = json.dumps({"seq": change.seq, "kind": kind, **args}) + "\n"
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        return change

    def start_process(
        self, name: str, args: list[str], out: Path, *, cgroup: str
    ) -> subprocess.Popen[bytes]:
        """Start a host process inside ``cgroup`` (made, and in the journal, already) and write
        it down by pid and start time as soon as it exists. It runs in a session of its own (a
        Ctrl-C to the simulator's terminal reaches the simulator, which stops its processes in
        order) and dies with the thread that started it (``PR_SET_PDEATHSIG``); a kill between
        the start and the entry is covered by the cgroup's entry and that signal. Its output is
        appended to ``out``."""
        with out.open("ab") as sink:
            proc = subprocess.Popen(
                cgroups.in_cgroup(cgroup, args),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                start_new_session=True,
                preexec_fn=processes.die_with_parent,
            )
        started = processes.process_started(proc.pid)
        if started is not None:
            self.record("process", pid=proc.pid, started=started, name=name)
        return proc

    def forget(self, change: Change) -> None:
        """``change`` was not made after all (e.g. another simulator took that bridge first)."""
        self.record("forget", change=change.seq)

    def changes(self) -> list[Change]:
        """The entries still to undo, in the order they were made (a torn last line skipped)."""
        try:
            lines = self.path.read_text().splitlines()[1:]
        except FileNotFoundError:
            return []
        found: list[Change] = []
        forgotten: set[int] = set()
        for line in lines:
            try:
                raw = json.loads(line)
                seq, kind = int(raw.pop("seq")), str(raw.pop("kind"))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            if kind == "forget":
                forgotten.add(int(raw["change"]))
            else:
                found.append(Change(seq, kind, raw))
        return [c for c in found if c.seq not in forgotten]

    def undo(self) -> Undone:
        """Undo every change, last first. Each undo is idempotent; one that fails is logged
        with what it left, and only the failed entries stay (the file goes once none is left)."""
        done = Undone()
        with _lock_of(self.path):
            if not self.path.exists():
                return done
            changes = self.changes()
            kept: list[Change] = []
            for change in reversed(changes):
                try:
                    step = UNDO[change.kind](**change.args)
                except Exception as exc:  # kept and named, never swallowed
                    step = Undone(left=[f"{change.describe()}: {exc}"])
                done.add(step)
                if step.left:
                    log.error("undoing %s of %s left %s", change.describe(), self.path, step.left)
                    kept.append(change)
            if kept:
                self._rewrite(list(reversed(kept)))
            else:
                self.path.unlink(missing_ok=True)
        return done

    def _rewrite(self, changes: list[Change]) -> None:
        header = json.dumps({"owner": {"pid": self.owner.pid, "started": self.owner.started}})
        lines = [header] + [json.dumps({"seq": c.seq, "kind": c.kind, **c.args}) for c in changes]
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, self.path)


def _check_undo_args(kind: str, args: dict[str, Any]) -> None:
    """Raise ValueError unless the undo of ``kind`` takes exactly ``args`` (each by name)."""
    undo = UNDO.get(kind, _forget_args if kind == "forget" else None)
    if undo is None:
        raise ValueError(f"journal: no undo for a change of kind {kind!r}; kinds: {sorted(UNDO)}")
    try:
        inspect.signature(undo).bind(**args)
    except TypeError as exc:
        raise ValueError(
            f"journal: a {kind!r} change with {sorted(args)} cannot be undone ({exc}); its undo "
            f"takes {list(inspect.signature(undo).parameters)}"
        ) from None


def _forget_args(change: int) -> None:
    """What a ``forget`` entry holds: the sequence number of the change not made."""


def _lock_of(path: Path) -> threading.Lock:
    with _journal_locks_guard:
        return _journal_locks.setdefault(path, threading.Lock())


def sweep() -> Undone:
    """Undo every pool journal on the machine whose owner is gone (a simulator killed with
    SIGKILL, or one whose undo failed and was kept), then remove what simulators share once
    nobody uses it. A journal whose owner still runs is left alone."""
    done = Undone()
    with shared.host_lock():
        for path in sorted(shared.JOURNALS.glob(_POOL_GLOB)) if shared.JOURNALS.is_dir() else ():
            journal = Journal.load(path)
            if journal.owner.alive():
                continue
            log.warning("undoing %s, left by a stopped simulator (pid %d)", path, journal.owner.pid)
            done.add(journal.undo())
        for tmp in shared.JOURNALS.glob(".*.tmp") if shared.JOURNALS.is_dir() else ():
            of = tmp.with_name(tmp.name[1:].removesuffix(".tmp"))  # a rewrite a kill cut short
            if not of.exists() or not Journal.load(of).owner.alive():
                tmp.unlink(missing_ok=True)
                done.removed.append(f"file {tmp}")
    done.removed += shared.remove_empty_parents()  # the lock too, unless a caller holds it
    return done


# ---------------------------------------------------------------------------- the undos


def _undo_process(pid: int, started: int, name: str = "") -> Undone:
    """SIGKILL the process if it is still the one recorded (pid and start time), and wait for it
    to end (a zombie has ended: its parent, or init, reaps it)."""
    what = f"process {pid} {name}".strip()
    if processes.process_started(pid) != started:
        return Undone(removed=[what])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _PROCESS_WAIT
    while processes.process_started(pid) == started and not processes.zombie(pid):
        if time.monotonic() > deadline:
            return Undone(left=[what])
        time.sleep(0.02)
    return Undone(removed=[what])


def _undo_cgroup(relative: str) -> Undone:
    """Kill every process still in the cgroup (shims, containers), then remove it everywhere."""
    survivors = cgroups.kill_cgroup(relative)
    left = [f"process {p} in cgroup {relative}" for p in sorted(survivors)]
    left += [f"cgroup {c}" for c in cgroups.remove_cgroup(relative)]
    return Undone(removed=[] if left else [f"cgroup {relative}"], left=left)


def _undo_scope(unit: str) -> Undone:
    """Stop the delegated systemd scope of the nodes' cgroups (cgroup v2 with systemd), killing
    whatever still runs in it, and remove its cgroup."""
    left = systemd.stop_scope(unit)
    return Undone(removed=[] if left else [f"systemd scope {unit}"], left=left)


def _undo_above_scope(holder: str) -> Undone:
    """Stop holding what is enabled above the systemd scopes (cgroup v2 with systemd); the last
    holder out puts it back as the first one found it."""
    systemd.above_scope().release(holder)
    return Undone(removed=[f"controllers above the scopes held by {holder}"])


def _undo_controllers(controllers: list[str]) -> Undone:
    """Disable again the controllers enabled above the scopes: a journal of a simulator from
    before :func:`_undo_above_scope` (``/run`` keeps it until a reboot or a sweep)."""
    left = systemd.disable_above_scope(controllers)
    return Undone(removed=[] if left else [f"controllers {' '.join(controllers)}"], left=left)


def _undo_mounts(paths: list[str]) -> Undone:
    left = mounts.unmount_under(*(Path(p) for p in paths))
    return Undone(removed=[] if left else [f"mounts under {p}" for p in paths],
                  left=[f"mount {m}" for m in left])  # fmt: skip


def _undo_netns(name: str) -> Undone:
    path = Path("/run/netns") / name
    if path.exists():
        done = _host_command("ip", "netns", "del", name)
        if path.exists():
            return Undone(left=[f"netns {name}: {done}"])
    return Undone(removed=[f"netns {name}"])


def _undo_link(name: str) -> Undone:
    if _host_command("ip", "link", "show", "dev", name, quiet=True) == "":
        failure = _host_command("ip", "link", "del", "dev", name)
        if _host_command("ip", "link", "show", "dev", name, quiet=True) == "":
            return Undone(left=[f"link {name}: {failure}"])
    return Undone(removed=[f"link {name}"])


def _undo_iptables(table: str, chain: str, rule: list[str], netns: str = "") -> Undone:
    """Delete one rule (from the namespace ``netns``, which takes it along when it goes)."""
    what = f"iptables {netns or 'host'} {table} {chain} {' '.join(rule)}"
    if netns and not (Path("/run/netns") / netns).exists():
        return Undone(removed=[what])
    prefix = ["ip", "netns", "exec", netns] if netns else []
    while _host_command(*prefix, "iptables", "-t", table, "-C", chain, *rule, quiet=True) == "":
        failure = _host_command(*prefix, "iptables", "-t", table, "-D", chain, *rule)
        if failure:
            return Undone(left=[f"{what}: {failure}"])
    return Undone(removed=[what])


def _undo_sysctls(holder: str, before: dict[str, str] | None = None) -> Undone:
    """Stop holding the kernel settings; the last holder out restores them (``before`` is what
    they were when this holder came, kept to say what was changed)."""
    sysctls.release_sysctls(holder)
    return Undone(removed=[f"sysctls held by {holder}"])


def _undo_directory(path: str) -> Undone:
    mounts.remove_tree(Path(path))
    if Path(path).exists():
        mounted = mounts.mounts_under(Path(path))
        return Undone(left=[f"directory {path}" + (f" (mounts: {mounted})" if mounted else "")])
    return Undone(removed=[f"directory {path}"])


def _undo_file(path: str) -> Undone:
    Path(path).unlink(missing_ok=True)
    return Undone(removed=[f"file {path}"])


def _undo_journal(path: str) -> Undone:
    return Journal.load(Path(path)).undo()


UNDO: Final[dict[str, Callable[..., Undone]]] = {
    "process": _undo_process,
    "cgroup": _undo_cgroup,
    "scope": _undo_scope,
    "above_scope": _undo_above_scope,
    "controllers": _undo_controllers,
    "mounts": _undo_mounts,
    "netns": _undo_netns,
    "link": _undo_link,
    "iptables": _undo_iptables,
    "sysctls": _undo_sysctls,
    "directory": _undo_directory,
    "file": _undo_file,
    "journal": _undo_journal,
}
"""The undo of each kind of change: idempotent, and each returns what it removed and left."""


def _host_command(*args: str, quiet: bool = False) -> str:
    """Run a host command; "" when it succeeds, else its failure (logged unless ``quiet``)."""
    done = subprocess.run(list(args), capture_output=True, text=True)
    if done.returncode == 0:
        return ""
    failure = f"`{' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}"
    if not quiet:
        log.warning("%s", failure)
    return failure or "failed"

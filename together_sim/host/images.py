"""The container images every real node gets, from image archives on disk (no registry): the
project's images directory (``--images``) and a user's own archives (``--image-archive``)."""

from __future__ import annotations

import json
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["IMAGES_ENV", "NodeImages", "archive_names", "find_images"]

IMAGES_ENV: Final = "TOGETHER_IMAGES_DIR"
PAUSE_ARCHIVE: Final = "pause.tar"
"""The sandbox (pause) image's archive in the images directory: every pod's first container."""


def archive_names(path: Path) -> list[str]:
    """The image names a ``docker save`` / ``skopeo copy ... docker-archive:`` file holds (its
    ``manifest.json`` RepoTags; an OCI archive's ``index.json`` ref names). A file that is not
    such an archive is an error that names it and says what to give instead."""
    fix = (
        "give a file written by `docker save IMAGE -o FILE.tar` or "
        "`skopeo copy ... docker-archive:FILE.tar:NAME:TAG`"
    )
    try:
        with tarfile.open(path) as archive:
            members = {m.name.lstrip("./"): m for m in archive.getmembers()}
            if "manifest.json" in members:
                handle = archive.extractfile(members["manifest.json"])
                manifest = json.load(handle) if handle is not None else []
                names = [t for entry in manifest for t in entry.get("RepoTags") or []]
            elif "index.json" in members:
                handle = archive.extractfile(members["index.json"])
                index = json.load(handle) if handle is not None else {}
                names = [
                    m.get("annotations", {}).get("io.containerd.image.name")
                    or m.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
                    for m in index.get("manifests", [])
                ]
            else:
                raise ValueError("it holds neither manifest.json nor index.json")
    except (OSError, tarfile.TarError, ValueError, json.JSONDecodeError) as exc:
        raise SystemExit(
            f"together_sim --image-archive {path}: not an image archive ({exc}); {fix}"
        ) from None
    names = [n for n in names if n]
    if not names:
        raise SystemExit(
            f"together_sim --image-archive {path}: the archive names no image (no RepoTags); "
            f"{fix}, which records the name pods then use"
        )
    return names


def find_images(explicit: Path | None) -> Path:
    """``--images``, else ``$TOGETHER_IMAGES_DIR``: the directory of image archives that
    ``tools/images/build.sh`` prints, which must hold the pause image."""
    candidate = explicit
    if candidate is None and os.environ.get(IMAGES_ENV):
        candidate = Path(os.environ[IMAGES_ENV])
    if candidate is None or not (candidate / PAUSE_ARCHIVE).is_file():
        where = candidate or f"(nowhere: neither --images nor ${IMAGES_ENV} is set)"
        raise SystemExit(
            f"together_sim --real-nodes: no {PAUSE_ARCHIVE} in {where}; build the node images "
            f'and point --images or ${IMAGES_ENV} at them: `export {IMAGES_ENV}="$(tools/images/'
            'build.sh)"`'
        )
    return candidate


@dataclass(frozen=True)
class NodeImages:
    """Every archive a real node imports (the images directory's, then the user's) and the
    sandbox image's name (its containerd pulls nothing)."""

    archives: tuple[Path, ...]
    sandbox: str

    @classmethod
    def load(cls, images_dir: Path, extra: tuple[Path, ...] = ()) -> NodeImages:
        for path in extra:
            archive_names(path)  # fails now, with the fix, rather than on every node
        sandbox = archive_names(images_dir / PAUSE_ARCHIVE)[0]
        own = tuple(sorted(images_dir.glob("*.tar")))
        return cls(archives=own + tuple(extra), sandbox=sandbox)

"""The one YAML reader (used by config/ and workload/), and resolution of built-in configs by short
name.

``resolve_path("tpu_v4", "hardware")`` finds ``configs/hardware/tpu_v4.yaml``; any argument
that is an existing file path is used as it is.

Where the built-ins live: the repository's top-level ``configs/`` and ``workloads/`` are the
one copy. A wheel carries them inside the package as ``accelsim/_builtin/configs`` and
``accelsim/_builtin/workloads`` (``pyproject.toml`` maps the two folders there at build time),
found through :mod:`importlib.resources`; a checkout (``PYTHONPATH`` or an editable install)
reads them where they are. ``ACCELSIM_HOME`` overrides both.

Every output file goes through :func:`writing` (or :func:`write_output`): the folder made, the
write, flush and close checked, and any failure one line naming the path and the reason
(``cannot write PATH: No space left on device``), never an empty reason.

Imports: errors, safe_yaml, safe_text.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from accelsim.errors import AccelsimError, ConfigError
from accelsim.safe_text import show
from accelsim.safe_yaml import read_file

BUILTIN_PACKAGE_DIR = "_builtin"
"""Folder inside the installed ``accelsim`` package that holds ``configs/`` and ``workloads/``."""


def packaged_root() -> Path | None:
    """``accelsim/_builtin`` of an installed wheel (via :mod:`importlib.resources`), else
    ``None`` (a checkout, where the folders are at the top level)."""
    try:
        root = resources.files("accelsim") / BUILTIN_PACKAGE_DIR
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - accelsim is always importable
        return None
    if not root.is_dir():
        return None
    return Path(str(root))  # a wheel is installed unpacked: a real folder


def project_root() -> Path:
    """The folder holding ``configs/`` and ``workloads/``: ``ACCELSIM_HOME`` if set, else the
    installed package's built-ins (a wheel), else the checkout's top level."""
    env = os.environ.get("ACCELSIM_HOME")
    if env:
        return Path(env)
    return packaged_root() or Path(__file__).resolve().parents[1]


def locate(path: str | os.PathLike) -> Path:
    """``path`` itself when it exists (or is absolute); else, for a relative path into the
    built-ins that the current folder lacks (``configs/scalesim/scale.cfg``,
    ``workloads/sweeps/x.yaml``), the built-in file, so the README's commands work from any
    folder with a wheel installed; else ``path`` unchanged (the caller's error names it)."""
    p = Path(path)
    if p.exists() or p.is_absolute():
        return p
    cand = project_root() / p
    return cand if cand.exists() else p


MAX_PATH_CHARS = 4096
"""Longest file name or built-in name accepted (Linux's PATH_MAX)."""


def _check_name(name_or_path: Any, kind: str) -> str:
    """A name or path as text, or a one-line :class:`ConfigError`: not text, a NUL byte, or
    longer than :data:`MAX_PATH_CHARS` (never an ``OSError``/``ValueError`` from the OS)."""
    if isinstance(name_or_path, os.PathLike):
        name_or_path = os.fspath(name_or_path)
    if not isinstance(name_or_path, str):
        raise ConfigError(None, kind, name_or_path,
                          f"expected a built-in {kind} name or a file path")
    if "\x00" in name_or_path or len(name_or_path) > MAX_PATH_CHARS:
        raise ConfigError(None, kind, name_or_path, "not a file name (a NUL byte, or longer than "
                          f"{MAX_PATH_CHARS} characters)")
    return name_or_path


def config_dir(kind: str) -> Path:
    """``configs/<kind>`` (``hardware``, ``energy``, ``scalesim``) or ``workloads`` for
    ``kind='workloads'``."""
    root = project_root()
    return root / "workloads" if kind == "workloads" else root / "configs" / kind


def builtin_names(kind: str, suffixes: tuple[str, ...] = (".yaml", ".yml")) -> list[str]:
    """Short names of the built-in files of one kind, sorted."""
    d = config_dir(kind)
    if not d.is_dir():
        return []
    return sorted({p.stem for p in d.iterdir()
                   if p.suffix in suffixes and not p.name.startswith("_")})


def resolve_path(name_or_path: str | os.PathLike, kind: str,
                 suffixes: tuple[str, ...] = (".yaml", ".yml")) -> Path:
    """A built-in short name or a file path -> an existing file; else a one-line error (a name
    the OS cannot take, too long or with a NUL byte, too)."""
    name_or_path = _check_name(name_or_path, kind)
    try:
        p = locate(name_or_path)
        if p.is_file():
            return p
        d = config_dir(kind)
        for suffix in suffixes:
            cand = d / f"{name_or_path}{suffix}"
            if cand.is_file():
                return cand
    except OSError as exc:  # a component longer than NAME_MAX, a loop of links
        raise ConfigError(name_or_path, None, None,
                          f"cannot open ({exc.strerror or exc})") from None
    names = builtin_names(kind, suffixes)
    near = difflib.get_close_matches(str(name_or_path), names, n=1)
    hint = f"did you mean '{near[0]}'?" if near else f"built-ins: {', '.join(names) or 'none'}"
    raise ConfigError(str(name_or_path), None, None,
                      f"no such file or built-in {kind} config ({hint})")


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """Parse a YAML mapping; a syntax error, a non-mapping or a document over the budgets of
    :mod:`accelsim.safe_yaml` (aliases, nesting, size) is a :class:`ConfigError`."""
    p = Path(path)
    data = read_file(p)
    if not isinstance(data, dict):
        raise ConfigError(str(p), "<root>", type(data).__name__, "expected a YAML mapping")
    return data


def write_failed(path: str | os.PathLike, exc: BaseException) -> AccelsimError:
    """The one-line error for an output that could not be written:
    ``cannot write PATH: REASON``, the reason never empty."""
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return AccelsimError(f"cannot write {show(os.fspath(path))}: {show(reason)}")


@contextlib.contextmanager
def writing(path: str | os.PathLike) -> Iterator[Path]:
    """Context for writing one output file: makes its folder, yields the path, and turns any
    :class:`OSError` raised inside (the open, a write, the flush or the close; a full disk, a
    read-only folder, a parent that is a file) into :func:`write_failed`'s one line."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        yield p
    except OSError as exc:
        raise write_failed(p, exc) from None


def write_output(path: str | os.PathLike, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text in ``encoding``, or bytes) to ``path`` through :func:`writing`:
    every write, the flush and the close checked; returns the path."""
    with writing(path) as p:
        if isinstance(data, bytes):
            with open(p, "wb") as fh:
                fh.write(data)
                fh.flush()
        else:
            with open(p, "w", encoding=encoding, newline="") as fh:
                fh.write(data)
                fh.flush()
    return p

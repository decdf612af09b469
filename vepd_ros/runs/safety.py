# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

r"""
Safety of what a command writes and reads: names that become paths, output directories, JSON files.

``safe_component(kind, value)``
    One path component made from a name (a model label, a scenario, ...) — from the command line, a
    ranges file, a sidecar or a message. Allowed: 1..``MAX_COMPONENT_LEN`` characters of
    ``[A-Za-z0-9_.+-]``, not starting with '.' or '-' (so never '.', '..', a hidden name or an
    option). Anything else (a '/', '\\', NUL, '..', an absolute path, an empty name) is a
    ``ParameterError`` naming the kind. Every place that turns such a name into a path calls it
    (``BatchWriter``, the recorder).

``prepare_output_dir(path, command=..., overwrite=False)``
    An output directory may be written only if it does not exist, is empty, or holds a previous
    output of the same command (its marker file ``.vepd-output.json`` says so). Anything else — a
    user's folder with files in it, another command's output, an existing file — is refused with a
    ``OutputDirError`` naming the path and ``--overwrite``. With ``overwrite`` the entries the
    command owns (``replaces``) are removed first and nothing else is touched. The marker is
    written (with ``info``, e.g. the study's plan) before any other file. ``check_output_dir`` is
    the same decision without side effects, for a command that computes everything before writing
    (``vepd bag``).

``load_json(path, what=...)``
    A JSON file read into the expected type, or a ``RunFileError`` naming the file: unreadable, not
    UTF-8, not JSON, nested too deep (a ``RecursionError`` in the parser), wrong top-level type.

Error messages quote values with ``vepd_ros.yamlio.quote`` (cut to ~80 characters).
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import shutil
from typing import Iterable

from vepd_ros.params import ParameterError

MAX_COMPONENT_LEN = 100
MARKER_NAME = '.vepd-output.json'
MARKER_FORMAT = 'vepd_ros.output/1'
_COMPONENT_RE = re.compile(r'[A-Za-z0-9_+][A-Za-z0-9_.+-]*')


class OutputDirError(ValueError):
    """
    An output directory cannot be written safely.

    It cannot be written without replacing something the user did not ask to replace.
    """


def safe_component(kind: str, value) -> str:
    """
    Return ``value`` if it is one safe path component.

    ``value`` if it is one safe path component (module doc), else ``ParameterError`` naming
    ``kind``.
    """
    expected = (
        f'one path component: 1..{MAX_COMPONENT_LEN} characters of letters, digits, '
        '_ . + -, '
        f"not starting with '.' or '-' (no '/', '..' or absolute path)"
    )
    if not isinstance(value, str):
        raise ParameterError(kind, value, expected)
    if not (0 < len(value) <= MAX_COMPONENT_LEN) or not _COMPONENT_RE.fullmatch(value):
        raise ParameterError(kind, value, expected)
    return value


# ---------------------------------------------------------------------------------------- output
# dirs


def read_output_marker(path) -> dict | None:
    """
    Read the marker of a previous output in directory ``path``.

    None: none, or not a marker we wrote.
    """
    m = Path(path) / MARKER_NAME
    if not m.is_file():
        return None
    try:
        d = load_json(m, what='output marker')
    except ValueError:
        return None
    return d if d.get('format') == MARKER_FORMAT and isinstance(d.get('command'), str) else None


def check_output_dir(path, *, command: str, overwrite: bool = False) -> Path:
    """
    Raise ``OutputDirError`` unless ``path`` may be written by ``command``.

    See the module doc; no side effect.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputDirError(
            f'{p}: exists and is not a directory; choose another output directory'
        )
    if not p.is_dir() or overwrite:
        return p
    try:
        empty = next(p.iterdir(), None) is None
    except OSError as exc:
        raise OutputDirError(f'{p}: cannot list the output directory ({exc.strerror})') from None
    if empty:
        return p
    mark = read_output_marker(p)
    if mark is not None and mark['command'] == command:
        return p
    what = (
        f"the output of 'vepd {mark['command']}'"
        if mark is not None
        else f'not empty and not an output of vepd {command}'
    )
    raise OutputDirError(
        f'{p}: {what}; refusing to write into it (its files would be replaced). '
        f'Choose a new or empty directory, or pass --overwrite to replace '
        f'what vepd {command} writes there'
    )


def prepare_output_dir(
    path,
    *,
    command: str,
    overwrite: bool = False,
    replaces: Iterable[str] = (),
    info: dict | None = None,
) -> Path:
    """
    Prepare an output directory: check, create, clear what ``command`` owns, write the marker.

    Check (``check_output_dir``), create, clear what ``command`` owns when allowed, write the
    marker.

    ``replaces``: names (relative to ``path``) of the entries this command writes; they are removed
    before writing when the directory is a previous output of ``command`` or ``overwrite`` is
    given, so a re-run leaves no stale file of the earlier one. Nothing else in the directory is
    touched.
    """
    p = check_output_dir(path, command=command, overwrite=overwrite)
    p.mkdir(parents=True, exist_ok=True)
    root = p.resolve()
    for name in replaces:
        q = p / name
        if root not in (q.resolve(), *q.resolve().parents) or q.resolve() == root:
            raise ValueError(f'prepare_output_dir: {name!r} is not inside {p}')
        if q.is_symlink() or q.is_file():
            q.unlink()
        elif q.is_dir():
            shutil.rmtree(q)
    mark = {'format': MARKER_FORMAT, 'command': command}
    mark.update(info or {})
    from vepd_ros.runs.atomic import atomic_write_text

    text = json.dumps(mark, indent=1, sort_keys=True, allow_nan=False) + '\n'
    atomic_write_text(p / MARKER_NAME, text)
    return p


# ----------------------------------------------------------------------------------------------
# JSON


class RunFileError(ValueError):
    """A run file or JSON file cannot be read; the message names the file and what was expected."""


def load_json(path, what: str = 'JSON file', expect: type = dict):
    """Parse a JSON file into ``expect`` or raise ``RunFileError`` naming the file (module doc)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise RunFileError(f'{p}: cannot read the {what} ({exc.strerror})') from None
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise RunFileError(f'{p}: the {what} is not UTF-8 text (byte {exc.start})') from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFileError(
            f'{p}: the {what} is not valid JSON ({exc.msg} at line {exc.lineno}, '
            f'column {exc.colno})'
        ) from None
    except RecursionError:
        raise RunFileError(f'{p}: the {what} is nested too deeply to be a {what}') from None
    except ValueError:  # after JSONDecodeError (a subclass): Python's int-size limit
        raise RunFileError(
            f'{p}: the {what} holds an integer with more digits than Python '
            f'reads (sys.get_int_max_str_digits); not a {what}'
        ) from None
    if not isinstance(obj, expect):
        raise RunFileError(
            f'{p}: the {what} holds a JSON {type(obj).__name__}, expected an '
            f'{"object" if expect is dict else expect.__name__}'
        )
    return obj

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Generic safe-file helpers: atomic writes and bounded JSON reading (a leaf: yamlio only).

Imported by every layer that writes or reads a file of its own (models, judge, metrics, runs,
report, pipelines, commands, nodes); it imports nothing of the package but ``yamlio``.

Atomic writes: a temporary file in the same directory, fsync, ``os.replace``, fsync of the
directory.

A reader (or a crash — SIGKILL, power loss after the fsyncs) sees either the old file or the
complete new one under the final name, never a partial one. Temporary names are hidden and carry
the writer's pid: ``.<final name>.tmp-<pid>-<random>``; ``remove_stale_temps`` clears those of
writers that are gone.

``atomic_write_many`` writes a batch the same way but syncs each directory once, after the last
rename: every file's data is still fsynced before its rename, so no file under its final name is
ever partial — after a SIGKILL (the rename is atomic) or a power loss (the data was on disk before
the name pointed at it). What the batch gives up: until the closing directory fsync, a power loss
may lose renames of the batch (those files are then missing, or present under their old contents),
never half-write them.

``load_json(path, what=...)``
    A JSON file read into the expected type, or a ``RunFileError`` naming the file: unreadable, a
    special file or FIFO (refused before any read), larger than ``MAX_JSON_BYTES``, not UTF-8,
    not JSON, nested too deep (a ``RecursionError`` in the parser), wrong top-level type.
    ``RunFileError`` is also the error of the run format (``runs.format``), which raises it for
    its CSV files: one class, so an ``except RunFileError`` catches both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import secrets

from vepd_ros.yamlio import read_input

MAX_JSON_BYTES = 64 * 1024 * 1024
"""Largest JSON file read (run sidecars, indexes and results are KB to a few MB)."""
_TMP_RE = re.compile(r'^\.(?P<final>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]+$')


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _replace_with(path: Path, data: bytes, fsync: bool) -> None:
    """
    Write ``data`` to ``path`` atomically.

    Write ``data`` to a temporary name beside ``path`` (fsynced if asked), then rename it to
    ``path``.
    """
    tmp = path.with_name(f'.{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}')
    try:
        with open(tmp, 'wb') as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path, data: bytes, fsync: bool = True) -> Path:
    path = Path(path)
    _replace_with(path, data, fsync)
    if fsync:
        _fsync_dir(path.parent)
    return path


def atomic_write_many(items, fsync: bool = True) -> list[Path]:
    """
    Write several files atomically, in order.

    ``[(path, bytes or str), ...]`` each written atomically, in order; with ``fsync`` each file's
    data is fsynced before its rename and every directory involved once after the last rename
    (module doc).
    """
    paths: list[Path] = []
    dirs: dict[Path, None] = {}  # an ordered set
    for path, data in items:
        path = Path(path)
        _replace_with(path, data.encode('utf-8') if isinstance(data, str) else data, fsync)
        paths.append(path)
        dirs.setdefault(path.parent, None)
    if fsync:
        for d in dirs:
            _fsync_dir(d)
    return paths


def atomic_write_text(path, text: str, fsync: bool = True) -> Path:
    return atomic_write_bytes(path, text.encode('utf-8'), fsync)


def is_temp_name(name: str) -> bool:
    return bool(_TMP_RE.match(name))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temps(directory) -> list[Path]:
    """
    Delete temporary files left by writers that no longer run; return them.

    Those writers were killed mid-write.
    """
    removed: list[Path] = []
    d = Path(directory)
    if not d.is_dir():
        return removed
    for p in d.iterdir():
        m = _TMP_RE.match(p.name)
        if m and not _pid_alive(int(m['pid'])):
            try:
                p.unlink()
                removed.append(p)
            except OSError:
                pass
    return removed


# ----------------------------------------------------------------------------------------------
# JSON


class RunFileError(ValueError):
    """A run file or JSON file cannot be read; the message names the file and what was expected."""


def load_json(path, what: str = 'JSON file', expect: type = dict):
    """Parse a JSON file into ``expect`` or raise ``RunFileError`` naming the file (module doc)."""
    p = Path(path)
    try:
        data = read_input(p, what=what, max_bytes=MAX_JSON_BYTES, error=RunFileError)
    except FileNotFoundError:
        raise RunFileError(f'{p}: cannot read the {what} (no such file)') from None
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

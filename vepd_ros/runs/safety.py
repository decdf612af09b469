# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

r"""
Safety of what a command writes: names that become paths, output directories and files.

``safe_component(kind, value)``
    One path component made from a name (a model label, a scenario, ...) — from the command line, a
    ranges file, a sidecar or a message. Allowed: 1..``MAX_COMPONENT_LEN`` characters of
    ``[A-Za-z0-9_.+-]``, not starting with '.' or '-' (so never '.', '..', a hidden name or an
    option). Anything else (a '/', '\\', NUL, '..', an absolute path, an empty name) is a
    ``ParameterError`` naming the kind. Every place that turns such a name into a path calls it
    (``BatchWriter``, the recorder).

``output_dir(path, command=..., overwrite=False, replaces=..., info=...)``
    THE way a command writes a directory, a context manager yielding the directory to write into.
    An output directory may be written only if it does not exist, is empty, or holds a previous
    output of the same command (its marker file ``.vepd-output.json`` says so). Anything else — a
    user's folder with files in it, another command's output, an existing file — is refused with
    an ``OutputDirError`` naming the path and ``--overwrite``. The output is replaced only whole:
    it is built in a sibling staging directory ``.NAME.vepd-stage-<pid>-<hex>`` (the same
    filesystem; a copy of what the previous output holds outside the entries the command owns,
    ``replaces``) and swapped in (``renameat2(RENAME_EXCHANGE)``, else two renames) with its
    marker when complete; the previous output is removed only after the swap. A refused, failed
    or interrupted command leaves ``path`` byte for byte as it was. One writer per directory:
    ``flock`` on ``.NAME.vepd-lock`` beside it; a second writer is refused naming the first (pid,
    command line). ``check_output_dir`` is the decision alone, without side effects.
    ``check_output_file``: the same decision for an output FILE (replaced only with
    ``--overwrite``; written with ``vepd_ros.fileio``).

A JSON file is read with ``vepd_ros.fileio.load_json`` (the leaf of generic safe-file helpers).

Error messages quote values with ``vepd_ros.yamlio.quote`` (cut to ~80 characters).
"""

from __future__ import annotations

from contextlib import contextmanager
import errno
import fcntl
import fnmatch
import json
import os
from pathlib import Path
import re
import secrets
import shutil
import sys
from typing import Iterable, Iterator

from vepd_ros.fileio import load_json
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


def check_output_dir(path, *, command: str, overwrite: bool = False,
                     accepts: Iterable[str] = ()) -> Path:
    """
    Raise ``OutputDirError`` unless ``path`` may be written by ``command``.

    See the module doc; no side effect. ``accepts``: other commands whose output ``command`` may
    extend without ``overwrite`` (a graph continuing a batch of ``vepd bag``).
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
    if mark is not None and (mark['command'] == command or mark['command'] in accepts):
        return p
    what = (
        f"the output of 'vepd {mark['command']}'"
        if mark is not None
        else f'not empty and not an output of vepd {command}'
    )
    raise OutputDirError(
        f'{p}: {what}; refusing to write into it (its files would be replaced). '
        f'Choose a new or empty directory, or pass {_OVERWRITE_FLAG.get(command, "--overwrite")} '
        f'to replace what vepd {command} writes there'
    )


_OVERWRITE_FLAG: dict = {}
"""Commands whose explicit choice has another name than ``--overwrite`` (the graphs)."""


def set_overwrite_flag(command: str, flag: str) -> None:
    """Name the option that is ``command``'s ``overwrite`` choice in its refusals."""
    _OVERWRITE_FLAG[command] = flag


def _target(path) -> Path:
    """Return the output directory's absolute path, its parent's symlinks resolved (renamed)."""
    p = Path(os.path.abspath(path))
    if p.parent == p:
        raise OutputDirError(f'{path}: the root directory cannot be an output directory')
    if p.is_symlink():
        p = p.resolve()
    return p.parent.resolve() / p.name


def _lock_path(target: Path) -> Path:
    return target.parent / f'.{target.name}.vepd-lock'


@contextmanager
def _locked(target: Path, command: str):
    """
    Hold the lock of output directory ``target``: ``flock`` on ``.NAME.vepd-lock`` beside it.

    A second writer gets ``OutputDirError`` naming the first (pid, command line). The lock file
    is removed on release; an opener that finds its inode replaced retries, so two writers never
    hold locks on two different files of one name.
    """
    lock = _lock_path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(
            f'{target}: cannot create the directory it goes in ({exc.strerror}: '
            f'{exc.filename})') from None
    while True:
        fd = os.open(lock, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 4096).decode('utf-8', 'replace').strip()
            finally:
                os.close(fd)
            raise OutputDirError(
                f'{target}: being written by another vepd command '
                f'({holder[:300] if holder else "pid unknown"}); refused — wait for it '
                f'to end, or stop it'
            ) from None
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        argv = ' '.join(sys.argv[1:])[:1000]
        os.ftruncate(fd, 0)
        os.write(fd, f'pid {os.getpid()}, vepd {command}: vepd {argv}\n'.encode())
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)


_LEFTOVER_RE = re.compile(
    r'^\..+\.(vepd-(stage|old)-\d+-[0-9a-f]+|vepd-lock|tmp-\d+-[0-9a-f]+)$')
"""Staging directories, locks and temporary files of writers: never carried into an output."""
_STAGE_RE = r'^\.{name}\.vepd-(?P<kind>stage|old)-\d+-[0-9a-f]+$'


def _recover(target: Path) -> None:
    """
    Clear what an earlier writer killed mid-way left beside ``target`` (the lock is held).

    Its staging directory is removed; a previous output it had moved aside (the two-rename swap,
    killed between the renames) is put back when ``target`` is missing.
    """
    rx = re.compile(_STAGE_RE.format(name=re.escape(target.name)))
    for q in sorted(target.parent.iterdir()):
        m = rx.match(q.name)
        if not m:
            continue
        if m['kind'] == 'old' and not os.path.lexists(target):
            os.rename(q, target)
        else:
            shutil.rmtree(q, ignore_errors=True)


def _fsync_dir(d: Path) -> None:
    from vepd_ros.fileio import _fsync_dir as sync

    sync(d)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(stage: Path, target: Path) -> None:
    """Put the complete ``stage`` at ``target``; the previous ``target`` is removed after it."""
    if not os.path.lexists(target):
        os.rename(stage, target)
    elif _exchange(stage, target):
        shutil.rmtree(stage, ignore_errors=True)  # now the previous output
    else:
        old = target.parent / f'.{target.name}.vepd-old-{os.getpid()}-{secrets.token_hex(4)}'
        os.rename(target, old)  # killed from here to the next rename: _recover puts it back
        os.rename(stage, target)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(target.parent)


class Discard(Exception):
    """
    Raised in an ``output_dir`` block: the new output is dropped, the previous one kept.

    For a command whose failure is an exit status rather than an exception (``vepd run``: an
    incomplete result); ``output_dir`` swallows it, ``code`` is the status.
    """

    def __init__(self, code: int = 1):
        super().__init__(code)
        self.code = code


ENDED: list = []
"""What each output directory of this process holds after a refused, failed or killed write
(one line each; ``vepd``'s clean end prints them)."""


@contextmanager
def output_dir(
    path,
    *,
    command: str,
    overwrite: bool = False,
    replaces: Iterable[str] = (),
    info: dict | None = None,
    live: Iterable[str] = (),
    accepts: Iterable[str] = (),
) -> Iterator[Path]:
    """
    Write output directory ``path`` whole or not at all; yield the directory to write into.

    THE way a command writes a directory (module doc): under the lock of ``path``, decided by
    ``check_output_dir``, built in a sibling staging directory that starts as a copy of what the
    previous output holds outside ``replaces`` (names relative to ``path``, e.g. ``Sim/ch_rw``),
    and swapped in with the marker (``info`` added) when the block ends normally. On an exception
    (a refusal, an error, KeyboardInterrupt, SIGTERM) the staging directory is removed and
    ``path`` is exactly as it was; a SIGKILL leaves only the staging directory, which the next
    writer removes. ``live``: entries the command keeps updating in ``path`` itself while it runs
    (tune's SQLite study storage), hard-linked into the new output when it is swapped in.
    Paths recorded in the output name ``path``, never the staging directory.
    """
    target = _target(path)
    replaces, live = set(replaces), set(live)
    for name in replaces | live:
        parts = Path(name).parts
        if not parts or Path(name).is_absolute() or '..' in parts:
            raise ValueError(f'output_dir: {name!r} is not inside {target}')
    # decided before anything (a lock file, a missing parent) is made; decided again under the lock
    check_output_dir(target, command=command, overwrite=overwrite, accepts=accepts)
    with _locked(target, command):
        _recover(target)
        check_output_dir(target, command=command, overwrite=overwrite, accepts=accepts)
        existed = target.is_dir()
        stage = target.parent / f'.{target.name}.vepd-stage-{os.getpid()}-{secrets.token_hex(4)}'
        done = False
        try:
            if existed:
                skip = replaces | live | {MARKER_NAME}

                def ignore(d, names):
                    rel = Path(d).relative_to(target)
                    return [n for n in names if _LEFTOVER_RE.match(n)
                            or any(fnmatch.fnmatchcase((rel / n).as_posix(), pat) for pat in skip)]

                shutil.copytree(target, stage, symlinks=True, ignore=ignore)
            else:
                os.mkdir(stage)
            try:
                yield stage
            except Discard:
                return
            for name in sorted(live):
                if os.path.lexists(target / name) and not os.path.lexists(stage / name):
                    try:
                        os.link(target / name, stage / name)
                    except OSError:
                        shutil.copy2(target / name, stage / name)
            mark = {'format': MARKER_FORMAT, 'command': command}
            mark.update(info or {})
            from vepd_ros.fileio import atomic_write_text

            text = json.dumps(mark, indent=1, sort_keys=True, allow_nan=False) + '\n'
            atomic_write_text(stage / MARKER_NAME, text)
            _swap_in(stage, target)
            done = True
        finally:
            if not done:
                shutil.rmtree(stage, ignore_errors=True)
                kept = f'{target}: left as it was' if existed else f'{target}: not created'
                held = [n for n in sorted(live) if os.path.lexists(target / n)]
                if held:  # updated in place: what this run added stays (tune's trials)
                    kept = (f'{target}: results left as they were' if existed else
                            f'{target}: no results written') + \
                        f'; its {", ".join(held)} keeps what this run added'
                ENDED.append(kept)


@contextmanager
def output_file(path, *, command: str, overwrite: bool = False, flag: str = '--overwrite'):
    """
    Hold the lock of output FILE ``path`` and decide it may be written (``check_output_file``).

    The command computes and writes the file (atomically, ``vepd_ros.fileio``) inside the block; a
    second writer of the same file is refused naming the first.
    """
    if path is None:
        yield None
        return
    target = _target(path)
    check_output_file(target, flag=flag, overwrite=overwrite)  # before the lock file is made
    with _locked(target, command):
        yield check_output_file(target, flag=flag, overwrite=overwrite)


GRAPH_COMMAND = 'graph'
"""The marker's command of an output_dir written in place by a graph's nodes (ros2 launch)."""


def claim_graph_output(path) -> None:
    """
    Decide that a graph node (recorder, evaluator) may write into ``output_dir`` in place.

    Under ``ros2 launch`` nothing can build the output beside and swap it in, so the nodes take
    only a new or empty directory (marking it as this graph's, ``state`` 'running') or the output
    of a graph that has not finished (a node restarted, or the launch restarted after a crash,
    continues it). A finished graph's output, a study, a directory of real runs — anything else
    is a ``ParameterError`` naming ``output_dir`` (the node exits 2) before a byte is written.
    ``vepd run`` gives its nodes a new staging directory (``output_dir``).
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ParameterError('output_dir', str(p), 'a directory (this path is a file)')
    from vepd_ros.fileio import is_temp_name

    # a marker another node of this graph is writing at this moment (nodes started at once, as
    # by ros2 launch or vepd run --processes) is a temporary file: not "files no graph wrote"
    if p.is_dir() and any(not is_temp_name(q.name) for q in p.iterdir()):
        mark = read_output_marker(p)
        if mark is None or mark['command'] != GRAPH_COMMAND or mark.get('state') != 'running':
            what = ('a finished graph output' if mark and mark['command'] == GRAPH_COMMAND
                    else f"the output of 'vepd {mark['command']}'" if mark
                    else 'a directory with files that no graph wrote')
            raise ParameterError(
                'output_dir', str(p),
                f'a new or empty directory; it is {what}, whose runs would be replaced (choose '
                'another output_dir, or run the graph with `vepd run ... --overwrite`, which '
                'swaps a complete new output in)')
        return
    mark_graph_output(p, 'running')


def mark_graph_output(path, state: str) -> None:
    """Write the marker of a graph's output_dir: ``state`` 'running' or 'complete'."""
    mark_output(path, GRAPH_COMMAND, state=state)


def mark_output(path, command: str, **info) -> None:
    """
    Create directory ``path`` if needed and write its marker (an output written in place).

    For what lives in the output while a command runs — a graph's runs under ros2 launch, a new
    tune's study storage (so an interrupted tune is continued by the same command) — never for
    the results, which ``output_dir`` swaps in whole.
    """
    from vepd_ros.fileio import atomic_write_text

    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    mark = {'format': MARKER_FORMAT, 'command': command, **info}
    atomic_write_text(p / MARKER_NAME, json.dumps(mark, indent=1, sort_keys=True) + '\n')


def check_output_file(path, *, flag: str = '--overwrite', overwrite: bool = False) -> Path:
    """
    Raise ``OutputDirError`` unless the output FILE ``path`` may be written.

    A new file, or an existing regular file with ``overwrite`` (the option named ``flag``); never
    a directory or a special file. No side effect; the file is then written atomically.
    """
    p = Path(path)
    if p.is_dir():
        raise OutputDirError(f'{p}: a directory; expected an output file name')
    if os.path.lexists(p):
        if not p.is_file():
            raise OutputDirError(f'{p}: exists and is not a regular file; refused')
        if not overwrite:
            raise OutputDirError(f'{p}: exists; pass {flag} to replace it')
    return p


# ---------------------------------------------------------------------------------------- memory


def available_memory() -> int | None:
    """Bytes this process may still allocate: MemAvailable, or less under an RLIMIT_AS."""
    avail = None
    try:
        with open('/proc/meminfo', encoding='ascii') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            used = 0
            with open('/proc/self/statm', encoding='ascii') as f:
                used = int(f.read().split()[0]) * os.sysconf('SC_PAGE_SIZE')
            room = max(soft - used, 0)
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError, ImportError):
        pass
    return avail


def check_memory_plan(need_bytes: float, flags: str) -> None:
    """
    Refuse a plan whose arrays cannot fit, before anything is allocated (or written).

    ``need_bytes``: the command's own estimate of its peak (a lower bound: it only counts the
    large arrays); ``flags``: the options whose product it is, named in the ``ValueError``.
    """
    avail = available_memory()
    if avail is not None and need_bytes > avail:
        raise ValueError(
            f'{flags}: these values need about {need_bytes / 2**30:.3g} GiB of memory for their '
            f'arrays, more than the {avail / 2**30:.3g} GiB available; use fewer or shorter runs'
        )

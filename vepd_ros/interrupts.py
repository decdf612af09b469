# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Where a SIGINT/SIGTERM may unwind a command at once, and where it waits.

``vepd``'s handler (``cli._stop``) raises the signal's exception where the main thread is, so a
command unwinds and leaves its outputs as they were. Inside a library's own bookkeeping that can
break the library: Optuna starts a trial's heartbeat thread in ``__enter__`` of a ``with`` block
(``Thread.start`` waits for the thread, and a signal there ends the wait), so an exception raised
there skips the ``__exit__`` that stops it: the thread keeps writing to the study and the
interpreter waits for it forever at exit; a write transaction cut short leaves SQLite's journal
beside the study file. ``held()`` marks such a region: a signal arriving in it is recorded
(``pend``) and raised when the region ends, or at once where ``released()`` opens it again (the
objective a library calls back: vepd's own code, safe to unwind anywhere).

Signal handlers run in the main thread only; this state is the main thread's.
"""

from __future__ import annotations

from contextlib import contextmanager

_depth = 0  # nesting of held() regions not re-opened by released()
_pending: list[BaseException] = []


def holding() -> bool:
    """Return whether a signal arriving now must wait (a ``held()`` region)."""
    return _depth > 0


def pend(exc: BaseException) -> None:
    """Record the exception a signal raises, for the end of the held region."""
    _pending.append(exc)


def _raise_pending() -> None:
    if _pending:
        raise _pending.pop()


@contextmanager
def held():
    """Run the block with signals deferred to its end (module doc)."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
    if _depth == 0:
        _raise_pending()


@contextmanager
def released():
    """Inside ``held()``, run the block interruptible: a signal that waited is raised first."""
    global _depth
    saved, _depth = _depth, 0
    try:
        _raise_pending()
        yield
    finally:
        _depth = saved


def reset() -> None:
    """Forget a recorded signal and any region (a new command in this process starts clean)."""
    global _depth
    _depth = 0
    _pending.clear()

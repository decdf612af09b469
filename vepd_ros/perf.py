# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Run-time switches for the offline hot paths (no numerical effect)."""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """
    Turn Python's cyclic garbage collector off for the block.

    The collector is restored after the block (nesting keeps the outer state).

    For a bounded pass that builds large acyclic containers (a bag's messages, the judge's
    per-sample lists and queue entries): each collection of the older generations walks every live
    container, so with ~10⁵ of them alive the collector alone costs ~10 % of ``vepd bag``.
    Reference counting still frees everything as usual; a cycle made inside the block waits for the
    next collection after it (Mercurial's ``util.nogc`` does the same while it builds its indexes).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Progress display for long commands: one place decides whether and how progress is shown.

Shown on a terminal (standard error is a TTY) unless the user asked for ``--quiet`` or ``--json``;
never when the output is a pipe or a file, so logs and CI output stay clean. tqdm draws the bar
(runs done of total, rate, time left).
"""

from __future__ import annotations

import sys
from typing import Iterable


def progress_enabled(quiet: bool = False) -> bool:
    """Whether a progress bar should be drawn: not quiet, and standard error is a terminal."""
    return not quiet and sys.stderr.isatty()


def progress_bar(
    total: float | None = None,
    desc: str = '',
    unit: str = 'it',
    quiet: bool = False,
    iterable: Iterable | None = None,
    **kwargs,
):
    """
    Return a tqdm bar on standard error, disabled (a no-op with the same methods) when not wanted.

    ``with progress_bar(total=n, desc='study', unit='run', quiet=args.quiet) as bar:
    bar.update(1)``.
    """
    from tqdm import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=not progress_enabled(quiet),
        dynamic_ncols=True,
        **kwargs,
    )

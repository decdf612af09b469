# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Argparse value types shared by the ``vepd`` subcommands.

The argparse value types shared by the ``vepd`` subcommands (not a subcommand: the leading ``_``
keeps ``vepd_ros.cli`` from registering it).

A bad value is refused by argparse itself: ``vepd CMD: error: argument --seed: ...`` naming the
option, exit status 2, before any work starts.
"""

from __future__ import annotations

import argparse


def int_range(low: int, high: int | None = None, what: str = 'an integer'):
    """Build an argparse ``type``: an integer ``low <= n`` (``<= high`` when given)."""
    expected = f'{what} >= {low}' if high is None else f'{what} from {low} to {high}'

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text[:80]!r}') from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f'expected {expected}, got {n}')
        return n

    parse.__name__ = 'integer'  # argparse's fallback message says "invalid integer value"
    return parse


seed_type = int_range(0, what='an integer seed')
"""``--seed``: numpy's SeedSequence takes any non-negative integer."""


def n_boot_type(text: str) -> int:
    """
    Parse ``--n-boot``, the number of bootstrap resamples.

    ``--n-boot``: 0 (no interval) to ``metrics.vepd.MAX_N_BOOT`` (imported when the option is
    given: the metrics pull in scipy, which ``vepd --help`` need not load).
    """
    from vepd_ros.metrics.vepd import MAX_N_BOOT

    return int_range(0, MAX_N_BOOT, 'a number of resamples')(text)

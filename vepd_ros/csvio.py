# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Reading CSV text files whose errors name the line (no ROS import).

Shared by the readers of CSV inputs that are not run files (the golden judge data, calibration
logs): blank lines are skipped, and every kept row remembers its line in the file, so a message can
say ``FILE, line N`` as an editor shows it.
"""

from __future__ import annotations

import csv
import re
from typing import Iterable

NUMBER_RE = re.compile(
    r'[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)', re.I | re.A
)
"""One number in a CSV cell (decimal, exponent, nan/inf; ASCII): run files, calibration logs."""


def nonblank_rows(lines: Iterable[str]) -> tuple[list[list[str]], list[int]]:
    """Return the non-blank rows of CSV text and each row's line number in the file (1-based)."""
    reader = csv.reader(lines)
    rows, line_of = [], []
    for r in reader:
        if r:
            rows.append(r)
            line_of.append(reader.line_num)
    return rows, line_of


def check_row_lengths(path, rows: list[list[str]], line_of: list[int]) -> None:
    """
    Raise ValueError naming the file and line of the first row not as long as the header.

    The error names the file and line of the first data row whose length is not the header's.
    """
    width = len(rows[0])
    for n, r in enumerate(rows[1:]):
        if len(r) != width:
            raise ValueError(
                f"{path}, line {line_of[n + 1]}: {len(r)} values, expected {width} (the header's)"
            )

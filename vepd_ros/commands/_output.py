# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
What ``vepd evaluate``, ``vepd study`` and ``vepd run`` print for a VEPD result.

Not a subcommand (the leading ``_``): ``print_result`` is the one way a command prints a result
(JSON or the tables on stdout, its warnings on stderr); ``format_tables`` (``report.text``, where
evaluator_node reads it too) is Tables I and II as text with what they mean.
"""

from __future__ import annotations

import json
import sys


def print_result(res: dict, as_json: bool) -> None:
    """Print ``res`` as JSON or as the tables (stdout), then each of its warnings (stderr)."""
    print(json.dumps(res, indent=1, allow_nan=False) if as_json else format_tables(res))
    for w in res['warnings']:
        print(f'warning: {w}', file=sys.stderr)


def format_tables(res: dict, width: int = 99) -> str:
    """
    Return Tables I and II as text: ``report.text.format_tables``.

    Imported when called: ``report`` loads numpy, which ``vepd --help`` must not.
    """
    from vepd_ros.report.text import format_tables as tables

    return tables(res, width)

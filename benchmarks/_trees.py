# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
This checkout beside another (``--tree OTHER``): what the benchmarks share to time both.

Not a benchmark (``make bench`` runs ``bench_*.py``). ``alternate`` is the side-by-side loop:
every round measures each tree in turn, so both see the same load on the shared box.
``run_cli``/``cli_cpu`` run ``python -m vepd_ros.cli`` of a tree in a fresh interpreter (the
tree on ``PYTHONPATH``); ``last_json`` reads what a worker interpreter printed;
``children_cpu`` and ``own_and_children_cpu`` are the CPU clocks (user + system seconds) the
figures are taken with.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import resource
import subprocess
import sys

ROOT = Path(__file__).resolve().parents[1]
"""This checkout (the benchmarks' own tree)."""


def children_cpu() -> float:
    """Return the user + system CPU seconds of this process's waited-for children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def own_and_children_cpu() -> float:
    """Return the user + system CPU seconds of this process and of its waited-for children."""
    a = resource.getrusage(resource.RUSAGE_SELF)
    return a.ru_utime + a.ru_stime + children_cpu()


def alternate(trees: dict, repeat: int, measure) -> dict:
    """
    Measure every tree ``repeat`` times, the trees alternating within each round.

    ``trees``: {name: checkout}, measured in that order each round; ``measure(name, tree, k)``
    (k: the round) returns the round's figure. Returns {name: [figure of each round]}.
    """
    out: dict = {name: [] for name in trees}
    for k in range(repeat):
        for name, tree in trees.items():
            out[name].append(measure(name, tree, k))
    return out


def per_case(rounds: list) -> dict:
    """Return [{case: figure}] of several rounds as {case: [figure of each round]}."""
    out: dict = {}
    for r in rounds:
        for case, v in r.items():
            out.setdefault(case, []).append(v)
    return out


def run_cli(tree, args, **kw) -> subprocess.CompletedProcess:
    """Run ``python -m vepd_ros.cli ARGS`` of ``tree`` in a fresh interpreter (checked)."""
    return subprocess.run(
        [sys.executable, '-m', 'vepd_ros.cli', *args],
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree)),
        check=True,
        **kw,
    )


def cli_cpu(tree, args, **kw) -> float:
    """Return the CPU seconds of ``run_cli(tree, args)``, interpreter start-up included."""
    c = children_cpu()
    run_cli(tree, args, **kw)
    return children_cpu() - c


def last_json(cmd, **kw):
    """Run ``cmd`` (checked) and return the JSON its last line of output holds."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    return json.loads(out.strip().splitlines()[-1])

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Names shared by the truth generator, the metric core and the run layout: scenarios and sides.

Scenarios: ours (``vepd_ros.truth``: rest, straight, circle, sine) and the authors' (rest, path,
circle, sine; design.md §4), matched by their canonical name (path = straight, half_sine = sine).
The rest scenario is scored alone, outside the combined VEPD. Sides: the reference side is
``real`` in any case, with or without the authors' ``_results`` folder suffix.

A leaf: the standard library only, so the cores (truth, metrics) and the file layer (runs) take
these facts from one place without importing each other.
"""

from __future__ import annotations

SCENARIOS = ('rest', 'straight', 'circle', 'sine')
"""The manoeuvres ``vepd_ros.truth`` generates."""

SCENARIO_ALIASES = {
    'path': 'straight',
    'straight_line': 'straight',
    'line': 'straight',
    'half_sine': 'sine',
}
"""Other names of a scenario (the authors' folders and common spellings) -> its canonical name."""

SCENARIO_ORDER = (
    'rest', 'path', 'straight', 'straight_line', 'line', 'circle', 'sine', 'half_sine'
)
"""Display order of scenario names (tables, run listings); unknown names after these, sorted."""

REST_SCENARIOS = frozenset({'rest'})
"""Canonical scenarios scored alone, outside the combined VEPD (no motion: E and S say little)."""

AUTHORS_SUFFIX = '_results'
"""The authors' model folders are ``Sim/<label>_results/``; the label is the name without it."""


def canonical_scenario(name: str) -> str:
    """Return the canonical name of a scenario (``path`` -> ``straight``); others unchanged."""
    return SCENARIO_ALIASES.get(name, name)


def scenario_sort_key(name: str):
    """Sort key of a scenario name: ``SCENARIO_ORDER`` first, other names after, alphabetically."""
    return (
        (SCENARIO_ORDER.index(name), '') if name in SCENARIO_ORDER else (len(SCENARIO_ORDER), name)
    )


def folder_label(name: str) -> str:
    """Return the model label a ``Sim/`` folder name holds (the authors' ``_results`` dropped)."""
    return name[: -len(AUTHORS_SUFFIX)] if name.endswith(AUTHORS_SUFFIX) else name


def is_reference_label(label: str) -> bool:
    """
    Tell whether a model label or ``Sim/`` folder name names the reference side.

    True for ``real`` in any case, with or without the authors' ``_results`` (``REAL_results`` is
    read back as ``REAL``). The one check for the evaluator, its reader and every writer.
    """
    return folder_label(label).lower() == 'real'

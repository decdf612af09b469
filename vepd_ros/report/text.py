# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Tables I and II of a VEPD result as terminal text, with what they mean.

``format_tables`` is the one text form of a result: ``vepd evaluate``, ``vepd study`` and ``vepd
run`` print it (``commands._output.print_result``), and so does evaluator_node when it ends a
``ros2 launch`` (a node cannot import ``commands/``, hence its place here).
"""

from __future__ import annotations

import textwrap


def _plain(text: str) -> str:
    """Markdown emphasis dropped for the terminal (code backticks kept)."""
    return text.replace('**', '')


def format_tables(res: dict, width: int = 99) -> str:
    """
    Format Tables I and II as text, then what they mean.

    Tables I and II as text, then what they mean (``report.explain``: the reference, the closest
    model and whether its interval is separated from the next, warnings on K and excluded runs, how
    to read VEPD).
    """
    from vepd_ros.report.explain import explanation_lines, fmt, fmt_interval, fmt_rank
    from vepd_ros.report.tables import side_name

    lines = [
        f'VEPD against {res["root"] if "root" in res else "the reference"} — velocity: '
        f'{res["velocity"]}, '
        f'preprocessing: {res["preprocessing"]["description"]}',
        f'combined over {", ".join(res["combined_scenarios"]) or "—"}'
        + (
            f' (excluded: {", ".join(res["excluded_from_combined"])})'
            if res['excluded_from_combined']
            else ''
        ),
        '',
        'Table I',
        f'{"model":<18}{"W1":>9}{"W2":>9}{"VEPD":>9}   95% interval       rank',
    ]
    for m, e in res['models'].items():
        ci_s = fmt_interval(e.get('ci95'), missing='—')
        lines.append(
            f'{e["display_name"]:<18}{fmt(e["W1"]):>9}{fmt(e["W2"]):>9}'
            f'{fmt(e["VEPD"]):>9}   {ci_s:<18} {fmt_rank(e["rank"])}'
        )
    sc = res['scenarios']
    lines += [
        '',
        'Table II (VEPD, rank per scenario)',
        f'{"model":<18}' + ''.join(f'{s:>16}' for s in sc),
    ]
    for m, e in res['models'].items():
        cells = []
        for s in sc:
            p = e['per_scenario'].get(s)
            cells.append(f'{fmt(p["VEPD"])} ({fmt_rank(p.get("rank"))})' if p else '—')
        lines.append(f'{e["display_name"]:<18}' + ''.join(f'{c:>16}' for c in cells))
    k = res['k']
    lines += ['', 'W1 in m/s, W2 unitless, VEPD = (W1 + W2)/2; lower is better.']
    counts = '; '.join(
        f'{side_name(res, s)}: ' + ', '.join(f'{a} {n}' for a, n in v.items())
        for s, v in k.items()
    )
    lines += textwrap.wrap(f'runs: {counts}', width, subsequent_indent='      ')
    for text in explanation_lines(res):
        lines += [''] + textwrap.wrap(_plain(text), width, break_on_hyphens=False)
    return '\n'.join(lines)

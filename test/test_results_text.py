# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Results that explain themselves, the same in every command that shows them.

Results that explain themselves: the closest model and whether its interval is separated from
the next, the simulated reference named, the K warning, C2 exclusions shown, the same interval from
`vepd study`, `vepd evaluate` and `vepd report`, and the CSV tables beside result.json.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
from math import comb
from pathlib import Path
import re

import pytest
from vepd_ros.cli import main
from vepd_ros.commands._output import format_tables
from vepd_ros.metrics.core import run_metrics
from vepd_ros.report.explain import (
    bootstrap_seed,
    closest_model,
    explanation_lines,
    k_warning,
    MIN_K_FOR_INTERVALS,
    PAPER_TABLE_I,
    reference_name,
)
from vepd_ros.runs.format import read_run
from vepd_ros.testing.synthetic_runs import write_synthetic_root

# The paper's HTML conversion (its tables are one row per line there).
PAPER = Path(__file__).resolve().parents[2] / 'shared' / 'seeds' / '000_c8a51eacde1a28e1.txt'


@pytest.fixture(scope='module')
def study(tmp_path_factory):
    """
    Run a small real study and its report; return (root, its --json stdout, its stderr).

    A small real study (rtk reference, seed 3: the bootstrap seed is not the default 0) and its
    report: (root, the study's --json stdout, its stderr).
    """
    root = tmp_path_factory.mktemp('study') / 's'
    argv = [
        'study',
        '--models',
        'ch_gauss,ch_rw,airsim',
        '--scenarios',
        'straight,circle',
        '--runs',
        '5',
        '--duration',
        '8',
        '--reference',
        'rtk',
        '--seed',
        '3',
        '--n-boot',
        '300',
        '--quiet',
        '--json',
        '--out',
        str(root),
    ]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) == 0
        assert main(['report', str(root), '--quiet', '--n-boot', '300']) == 0
    return root, out.getvalue(), err.getvalue()


def _run(argv, capsys):
    assert main(argv) == 0
    return capsys.readouterr()


def test_same_interval_from_study_evaluate_and_report(study, capsys):
    root, out, err = study
    s = json.loads(out[: out.index('\n}\n') + 2])
    assert f'{root / "result.json"}' in err and 'table1.csv' in err  # says where things went
    assert f'report: {root / "report" / "report.html"}' in out
    e = json.loads(_run(['evaluate', str(root), '--json', '--n-boot', '300'], capsys).out)
    r = json.loads((root / 'report' / 'result.json').read_text())
    assert s['bootstrap']['seed'] == e['bootstrap']['seed'] == r['bootstrap']['seed'] == 3
    assert e['bootstrap']['seed_source'] == "the runs' study seed"
    for m in s['models']:
        assert s['models'][m]['ci95'] == e['models'][m]['ci95'] == r['models'][m]['ci95']
        for sc in s['models'][m]['per_scenario']:
            ps, pe = s['models'][m]['per_scenario'][sc], e['models'][m]['per_scenario'][sc]
            assert ps['ci95'] == pe['ci95']
    # An explicit seed still wins, and changes the interval.
    argv = ['evaluate', str(root), '--json', '--n-boot', '300', '--seed', '0']
    e0 = json.loads(_run(argv, capsys).out)
    assert e0['bootstrap']['seed'] == 0
    assert e0['models']['ch_rw']['ci95'] != e['models']['ch_rw']['ci95']
    assert bootstrap_seed(root) == (3, "the runs' study seed")


def test_authors_files_default_seed_and_real_reference(tmp_path, capsys):
    root = write_synthetic_root(
        tmp_path / 'a', 'authors', k=5, duration_s=5.0, models=('chWalk_results', 'AirSim_results')
    )
    assert bootstrap_seed(root) == (0, 'default')
    text = _run(['evaluate', str(root), '--n-boot', '100'], capsys).out
    assert 'simulated reference' not in text.lower() and 'Reference: the real runs' in text
    assert 'runs: Real:' in text


def test_terminal_names_the_simulated_reference_and_the_closest_model(study, capsys):
    root = study[0]
    text = _run(['evaluate', str(root), '--n-boot', '300'], capsys).out
    assert 'simulated reference (`rtk`)' in text and 'not real data' in text
    res = json.loads((root / 'result.json').read_text())
    best = min(res['models'], key=lambda m: res['models'][m]['VEPD'])
    name = res['models'][best]['display_name']
    assert f'Closest to the simulated reference (`rtk`): {name}, VEPD' in text
    assert 'W1 in m/s, W2 unitless' in text and 'lower is better' in text
    assert '**' not in text  # Markdown emphasis dropped in the terminal
    assert all(len(line) <= 99 for line in text.splitlines()[-30:])  # the explanation is wrapped


def _res(cis: dict, k=10, n_boot=1000) -> dict:
    """Build a minimal result: models with VEPD = the interval's midpoint."""
    models = {
        m: {
            'display_name': m.upper(),
            'VEPD': None if ci is None else sum(ci) / 2,
            'ci95': ci,
            'W1': 0.0,
            'W2': 0.0,
            'rank': None,
            'per_scenario': {},
        }
        for m, ci in cis.items()
    }
    return {
        'models': models,
        'k': {'real': {'circle': k}, **{m: {'circle': k} for m in cis}},
        'bootstrap': {'n_boot': n_boot},
        'velocity': 'speed',
        'reference': 'real',
    }


@pytest.mark.parametrize(
    'b_ci, c_ci, separated',
    [
        ((0.01, 0.02), (0.03, 0.05), True),
        ((0.01, 0.035), (0.03, 0.05), False),
        ((0.01, 0.03), (0.03, 0.05), False),
    ],
)
def test_closest_is_separated_exactly_when_the_intervals_do_not_overlap(b_ci, c_ci, separated):
    c = closest_model(_res({'b': b_ci, 'c': c_ci, 'worst': (0.5, 0.6)}))
    assert (c['best'], c['next'], c['separated']) == ('b', 'c', separated)
    assert ('not separated' in c['text']) == (not separated)
    assert closest_model(_res({'b': None, 'c': None})) is None
    one = closest_model(_res({'b': (0.1, 0.2)}))
    assert one['next'] is None and 'only model' in one['text']


def test_k_warning_below_five_and_its_resample_count():
    assert MIN_K_FOR_INTERVALS == 5
    for k in (2, 3, 4):
        w = k_warning(_res({'b': (0.1, 0.2)}, k=k))
        assert f'K = {k} runs' in w and f'only {comb(2 * k - 1, k)} distinct resamples' in w
        # the count stated is the number of distinct multisets a bootstrap of k values can draw
        draws = {tuple(sorted(d)) for d in itertools.product(range(k), repeat=k)}
        assert len(draws) == comb(2 * k - 1, k)
    assert k_warning(_res({'b': (0.1, 0.2)}, k=2)).count('3 distinct') == 1
    assert k_warning(_res({'b': (0.1, 0.2)}, k=5)) is None
    assert k_warning(_res({'b': (0.1, 0.2)}, k=2, n_boot=0)) is None  # no interval, no warning


def test_excluded_runs_and_incomplete_batches_are_shown(study, capsys):
    root = study[0]
    res = json.loads((root / 'result.json').read_text())
    res.update(
        {
            'complete': False,
            'min_coverage': 0.9,
            'excluded_runs': [
                {
                    'path': 'Sim/ch_rw/circle_4.csv',
                    'label': 'ch_rw',
                    'scenario': 'circle',
                    'reason': 'estimates 41 % of expected',
                }
            ],
            'incomplete_batches': [{'label': 'ch_rw', 'scenario': 'circle', 'have': 4, 'k': 5}],
        }
    )
    text = format_tables(res)
    assert 'Incomplete result' in text
    assert (
        'excluded run `Sim/ch_rw/circle_4.csv` (ch_rw / circle): estimates 41 % of expected'
        in text
    )
    assert 'incomplete batch ch_rw / circle: 4 of K = 5 runs' in text
    assert not any(
        'excluded run' in x or 'Incomplete' in x
        for x in explanation_lines(json.loads((root / 'result.json').read_text()))
    )


def test_reading_paragraph_quotes_the_paper():
    text = explanation_lines(_res({'b': (0.1, 0.2)}))[-1]
    for phrase in ('in m/s', 'unitless', '(W1 + W2)/2', 'no single unit'):
        assert phrase in text
    for name, v in PAPER_TABLE_I:
        assert name in dict(PAPER_TABLE_I) and v > 0
    if not PAPER.is_file():
        pytest.skip(f'the paper is not at {PAPER}')
    paper = PAPER.read_text()
    start = paper.index('TABLE I: VEPD values')
    table = paper[start: paper.index('TABLE II', start)]
    for name, v in PAPER_TABLE_I:  # each quoted VEPD is the paper's, for that model
        row = rf'^{re.escape(name)} [0-9.]+ [0-9.]+ {re.escape(str(v))}$'
        assert re.search(row, table, re.M), name
    for v in ('0.0211', '0.0796', '0.0867'):
        assert v in paper


def _rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_csv_tables_beside_result_json(study, capsys, tmp_path):
    root = study[0]
    _run(['evaluate', str(root), '--out', str(tmp_path / 'ev'), '--n-boot', '300'], capsys)
    res = json.loads((tmp_path / 'ev' / 'result.json').read_text())
    t1 = _rows(tmp_path / 'ev' / 'table1.csv')
    assert [r['label'] for r in t1] == list(res['models'])
    for r in t1:
        e = res['models'][r['label']]
        assert [float(r[c]) for c in ('W1_mps', 'W2', 'VEPD')] == [e['W1'], e['W2'], e['VEPD']]
        assert [float(r['ci95_low']), float(r['ci95_high'])] == e['ci95']
    t2 = _rows(tmp_path / 'ev' / 'table2.csv')
    assert len(t2) == sum(len(e['per_scenario']) for e in res['models'].values())
    for r in t2:
        assert float(r['VEPD']) == res['models'][r['label']]['per_scenario'][r['scenario']]['VEPD']
    runs = _rows(tmp_path / 'ev' / 'runs.csv')
    assert len(runs) == sum(n for v in res['k'].values() for n in v.values())
    for r in runs[:: max(1, len(runs) // 6)]:  # each row's E and S are those of the file it names
        E, S = run_metrics(*read_run(r['path']).signal('speed'))
        assert (float(r['E_mps']), float(r['S'])) == pytest.approx((E, S), rel=1e-12, abs=1e-15)
    assert {r['model'] for r in runs if r['side'] == 'real'} == {reference_name(res)}
    for name in ('table1.csv', 'table2.csv', 'runs.csv'):  # the study and the report write them
        assert (root / name).is_file() and (root / 'report' / name).is_file()
    assert (root / 'table1.csv').read_text() == (tmp_path / 'ev' / 'table1.csv').read_text()


def test_a_result_without_provenance_is_not_called_real():
    """
    A result without the reference's provenance does not call it real.

    A result that does not record where its reference came from (e.g. the graph evaluator's)
    names it neutrally instead of claiming real data.
    """
    res = _res({'b': (0.1, 0.2)})
    assert reference_name(res) == 'Reference' and 'does not record' in explanation_lines(res)[0]
    assert reference_name({**res, 'reference_model': None}) == 'Real'
    assert reference_name({**res, 'reference_model': 'rtk'}) == 'Simulated reference (rtk)'

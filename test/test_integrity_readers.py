# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test that every bad run file, sidecar or index is a clear error naming the file.

Issue 17, readers: every bad run file, sidecar or index is a clear error naming the file (exit 2
from `vepd evaluate`, never a traceback); no work proportional to a number in a file name; a model
folder named real is refused; an interrupted study or a run with lost samples is flagged (contract
C2); padding.
"""

from __future__ import annotations

import json
from pathlib import Path
import time

import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.metrics.evaluator import coverage_exclusion, evaluate_root, EvaluatorCore
from vepd_ros.runs.format import read_run, RunFileError, RunRecord, write_run
from vepd_ros.runs.layout import MAX_RUN_INDEX, missing_indices, scan_batch_dir
from vepd_ros.runs.safety import prepare_output_dir
from vepd_ros.testing.synthetic_runs import synthetic_run, write_authors_csv, write_synthetic_root


@pytest.fixture
def root(tmp_path):
    return write_synthetic_root(
        tmp_path / 'root', 'ours', k=3, scenarios=('straight', 'circle'), models=('ch_rw',)
    )


def _evaluate(root, capsys, *extra):
    rc = vepd(['evaluate', str(root), '--n-boot', '0', *extra])
    out, err = capsys.readouterr()
    assert 'Traceback' not in err
    return rc, out, err


def _rewrite_csv(path: Path, fn):
    lines = path.read_text().splitlines()
    path.write_text('\n'.join(fn(lines)) + '\n')


def _set_cell(lines, row, col, value):
    cells = lines[row].split(',')
    cells[col] = value
    lines[row] = ','.join(cells)
    return lines


CSV_CASES = {
    'constant se_time': (
        lambda ls: [ls[0]] + [_set_cell([ln], 0, 0, '1.5')[0] for ln in ls[1:30]] + ls[30:],
        'se_time',
    ),
    'repeated gt_time': (lambda ls: _set_cell(ls, 3, 1, ls[2].split(',')[1]), 'gt_time'),
    'duplicate column': (lambda ls: [ls[0].replace('se_vy', 'se_vel')] + ls[1:], 'more than once'),
    'underscore number': (lambda ls: _set_cell(ls, 4, 2, '1_0'), 'not a number'),
    'arabic digits': (lambda ls: _set_cell(ls, 4, 2, '\u0661'), 'not a number'),
    '1e308': (lambda ls: _set_cell(ls, 4, 2, '1e308'), 'beyond the bound'),
    'epoch stamps': (
        lambda ls: (
            [ls[0]] + [_set_cell([ln], 0, 0, repr(1.7e9 + i))[0] for i, ln in enumerate(ls[1:])]
        ),
        'beyond the bound',
    ),
    'huge cell': (lambda ls: _set_cell(ls, 4, 2, 'x' * 100_000), 'not a number'),
    'comment rows': (lambda ls: [ls[0]] + ['#' + ln for ln in ls[1:]], 'not a number'),
}


@pytest.mark.parametrize('case', sorted(CSV_CASES))
def test_bad_run_csv_is_exit_2_naming_file_and_column(root, capsys, case):
    fn, what = CSV_CASES[case]
    bad = root / 'Sim' / 'ch_rw' / 'circle_2.csv'
    _rewrite_csv(bad, fn)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(bad) in err and what in err, err
    assert len(err) < 1000  # never the whole bad input


NON_FINITE_CASES = {
    'inf': lambda ls: _set_cell(ls, 4, 3, 'inf'),
    'nan': lambda ls: _set_cell(ls, 4, 2, 'NaN'),
}


@pytest.mark.parametrize('case', sorted(NON_FINITE_CASES))
def test_run_csv_with_non_finite_values_is_excluded_naming_file_and_column(root, capsys, case):
    """A well-formed run holding nan/inf is not scored: excluded with its reason (issue 24)."""
    bad = root / 'Sim' / 'ch_rw' / 'circle_2.csv'
    _rewrite_csv(bad, NON_FINITE_CASES[case])
    rc, out, err = _evaluate(root, capsys, '--json')
    res = json.loads(out)
    (ex,) = res['excluded_runs']
    assert rc == 4 and ex['path'] == str(bad) and 'not finite' in ex['reason'], err
    assert res['k']['ch_rw']['circle'] == 2


SIDECAR_CASES = {
    'null': None,
    'list': [1, 2],
    'dict': {'a': 1},
    'Infinity': float('inf'),
    'bool': True,
    'string': '30',
    'float': 30.0,
    'huge': 10**30,
    'negative': -1,
}


@pytest.mark.parametrize('case', sorted(SIDECAR_CASES))
def test_bad_sidecar_se_len_is_a_clear_error(root, capsys, case):
    sc = root / 'Real' / 'straight_1.json'
    meta = json.loads(sc.read_text())
    meta['se_len'] = SIDECAR_CASES[case]
    sc.write_text(json.dumps(meta))
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and 'straight_1' in err and 'se_len' in err, err


@pytest.mark.parametrize(
    'content',
    [
        b'[' * 100_000 + b']' * 100_000,
        b'\xff\xfe\x00binary',
        b'[1, 2]',
        b'{"se_len": 3',
        b'',
        b'{"se_len": 1' + b'0' * 100_000 + b'}',
    ],
)
def test_unreadable_sidecar_names_the_file(root, capsys, content):
    sc = root / 'Real' / 'circle_3.json'
    sc.write_bytes(content)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(sc) in err, err


def test_binary_csv_names_the_file(root, capsys):
    bad = root / 'Real' / 'circle_1.csv'
    bad.write_bytes(b'se_time,gt_time,se_vel,gt_vel\n\xff\xfe\x00\x01\n')
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(bad) in err and 'UTF-8' in err


@pytest.mark.parametrize('value', [['a'], 3, {'x': 1}, '', 'x' * 1000])
def test_index_display_name_of_the_wrong_type(root, capsys, value):
    idx = root / 'Sim' / 'ch_rw' / 'index.json'
    d = json.loads(idx.read_text())
    d['display_name'] = value
    idx.write_text(json.dumps(d))
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(idx) in err and 'display_name' in err


def test_deep_or_binary_index_is_a_warning_not_a_crash(root, capsys):
    idx = root / 'Sim' / 'ch_rw' / 'index.json'
    idx.write_bytes(b'[' * 100_000)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 0 and 'unreadable batch index' in err and str(idx) in err


def test_stray_huge_run_number_is_refused_at_once(root, capsys):
    stray = root / 'Real' / 'straight_1000000000.csv'
    stray.write_text((root / 'Real' / 'straight_1.csv').read_text())
    t0 = time.process_time()
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and 'straight_1000000000.csv' in err and str(MAX_RUN_INDEX) in err
    assert time.process_time() - t0 < 30  # (a billion-element set took minutes)
    long = root / 'Real' / ('straight_' + '9' * 200 + '.csv')
    stray.unlink()
    long.write_text('x')
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and len(err) < 1000


def test_gap_check_is_proportional_to_the_files():
    assert missing_indices([1, 2, 5, MAX_RUN_INDEX]) == (
        MAX_RUN_INDEX - 4,
        [3, 4, 6, 7, 8, 9, 10, 11, 12, 13],
    )
    assert missing_indices([1, 2, 3]) == (0, [])


def test_gap_warning_within_the_limit(root):
    text = (root / 'Real' / 'straight_1.csv').read_text()
    (root / 'Real' / f'straight_{MAX_RUN_INDEX}.csv').write_text(text)
    _, warns = scan_batch_dir(root / 'Real', 'real')
    assert any('miss j = 4, 5, 6' in w and '...' in w for w in warns)


@pytest.mark.parametrize('name', ['real', 'REAL', 'Real_results', 'rEaL'])
def test_model_folder_named_real_is_refused(root, capsys, name):
    (root / 'Sim' / 'ch_rw').rename(root / 'Sim' / name)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and name in err and 'reference' in err


def test_interrupted_study_is_flagged(root, capsys):
    prepare_output_dir(
        root,
        command='study',
        overwrite=True,
        info={
            'plan': {'runs': 3, 'models': ['ch_rw', 'airsim'], 'scenarios': ['straight', 'circle']}
        },
    )
    for side in ('Real', 'Sim/ch_rw'):
        (root / side / 'circle_3.csv').unlink()
    rc, out, err = _evaluate(root, capsys, '--json')
    assert rc == 4 and 'incomplete batch ch_rw / circle: 2 of K = 3 runs' in err
    assert '--allow-incomplete' in err
    res = json.loads(out)
    assert res['complete'] is False and res['min_coverage'] == 0.9 and res['excluded_runs'] == []
    got = {(b['label'], b['scenario'], b['have'], b['k']) for b in res['incomplete_batches']}
    assert got == {
        ('real', 'circle', 2, 3),
        ('ch_rw', 'circle', 2, 3),
        ('airsim', 'straight', 0, 3),
        ('airsim', 'circle', 0, 3),
    }
    assert _evaluate(root, capsys, '--allow-incomplete')[0] == 0
    assert _evaluate(root, capsys, '--allow-incomplete', '--strict')[0] == 3


def test_short_batch_without_a_plan_is_flagged_against_its_peers(root, capsys):
    (root / 'Sim' / 'ch_rw' / 'straight_3.csv').unlink()
    res = evaluate_root(root, n_boot=0)
    assert not res['complete'] and res['incomplete_batches'] == [
        {'label': 'ch_rw', 'scenario': 'straight', 'have': 2, 'k': 3}
    ]
    assert evaluate_root(root, n_boot=0, k=2)['complete'] is True


def test_complete_root_is_complete(root, capsys):
    rc, out, _ = _evaluate(root, capsys, '--json')
    res = json.loads(out)
    assert rc == 0 and res['complete'] is True
    assert res['incomplete_batches'] == [] == res['excluded_runs']


def _coverage(received=100, expected=100, gap=0.04, rate=25.0):
    return {
        'estimates': {
            'expected': expected,
            'received': received,
            'max_gap_s': gap,
            'rate_hz': rate,
        },
        'truth': {'expected': 100, 'received': 100, 'max_gap_s': 0.04, 'rate_hz': 25.0},
    }


def test_coverage_rule():
    assert coverage_exclusion({}) is None
    assert coverage_exclusion({'coverage': _coverage()}) is None
    assert coverage_exclusion({'coverage': _coverage(received=90)}) is None  # 90 % = the threshold
    assert 'estimates: 89 of 100' in coverage_exclusion({'coverage': _coverage(received=89)})
    assert coverage_exclusion({'coverage': _coverage(gap=0.5)}) is None  # floor 0.5 s
    assert 'gap of 0.6 s > 0.5 s' in coverage_exclusion({'coverage': _coverage(gap=0.6)})
    # 5 periods at 5 Hz: 1 s
    assert 'gap' in coverage_exclusion({'coverage': _coverage(gap=1.1, rate=5.0)})
    assert 'gap of inf' in coverage_exclusion({'coverage': _coverage(gap=float('inf'))})
    for bad in (
        [1],
        {'estimates': 3},
        _coverage(received=-1),
        _coverage(gap=float('nan')),
        _coverage(received=True),
    ):
        with pytest.raises(ValueError, match='coverage'):
            coverage_exclusion({'coverage': bad}, where='x.csv')


def test_inconsistent_coverage_is_an_error_naming_file_and_field(root, capsys):
    """
    Refuse a coverage block that cannot describe its run.

    A coverage block that cannot describe its run (rate 0 for a stream with samples, more
    samples received than the run file holds) is exit 2 naming the file and the field, not a run
    scored or excluded on its word.
    """
    rows = {'estimates': 210, 'truth': 151}
    assert coverage_exclusion({'coverage': _coverage(received=100)}, rows=rows) is None
    for bad, field in (
        (_coverage(rate=0.0), 'estimates.rate_hz'),
        (_coverage(received=10**12, expected=210), 'estimates.received'),
    ):
        with pytest.raises(ValueError, match=field.replace('.', r'\.')):
            coverage_exclusion({'coverage': bad}, where='x.csv', rows=rows)
    sc = root / 'Sim' / 'ch_rw' / 'circle_2.json'
    meta = json.loads(sc.read_text())
    n = meta['se_len']
    for cov, field in (
        (_coverage(rate=0), 'coverage.estimates.rate_hz'),
        (_coverage(expected=n, received=n + 1), 'coverage.estimates.received'),
        (_coverage(expected=210, received=10**12), 'coverage.estimates.received'),
    ):
        sc.write_text(json.dumps({**meta, 'coverage': cov}))
        rc, _, err = _evaluate(root, capsys)
        assert rc == 2 and 'circle_2' in err and field in err and 'Traceback' not in err, err


def test_runs_with_lost_samples_are_excluded_and_named(root, capsys):
    sc = root / 'Sim' / 'ch_rw' / 'circle_2.json'
    meta = json.loads(sc.read_text())
    meta['coverage'] = _coverage(received=50)
    sc.write_text(json.dumps(meta))
    rc, out, err = _evaluate(root, capsys, '--json')
    res = json.loads(out)
    assert rc == 4 and res['complete'] is False
    assert res['excluded_runs'] == [
        {
            'path': str(root / 'Sim' / 'ch_rw' / 'circle_2.csv'),
            'label': 'ch_rw',
            'scenario': 'circle',
            'reason': 'estimates: 50 of 100 expected samples (50.0% < 90%)',
        }
    ]
    assert res['k']['ch_rw']['circle'] == 2 and 'excluded run ' in err and 'circle_2.csv' in err
    # the excluded run is not scored: same result as without the file
    full = evaluate_root(root, n_boot=0, min_coverage=0.4)
    assert full['complete'] and full['k']['ch_rw']['circle'] == 3
    (root / 'Sim' / 'ch_rw' / 'circle_2.csv').unlink()
    without = evaluate_root(root, n_boot=0, k=3)
    assert without['models']['ch_rw']['VEPD'] == res['models']['ch_rw']['VEPD']


def test_evaluator_core_refuses_real_as_a_model():
    core = EvaluatorCore()
    for label in ('real', 'Real', 'REAL'):
        with pytest.raises(ValueError, match='reference'):
            core.add_model(label)


# ------------------------------------------------------------------------------------------------
# padding


def test_padding_is_empty_cells_and_every_layout_reads_the_same(tmp_path):
    rec = synthetic_run(np.random.default_rng(1), 'circle', 5.0)
    assert len(rec.se_t) != len(rec.gt_t)
    p = write_run(tmp_path / 'circle_1.csv', rec)
    tail = p.read_text().splitlines()[-1].split(',')
    assert '' in tail and '0.0' not in tail  # padding cannot be mistaken for 0 m/s
    (tmp_path / 'zero').mkdir()
    z = write_run(tmp_path / 'zero' / 'circle_1.csv', rec, padding='zero')
    assert z.read_text().splitlines()[-1].split(',').count('0.0') >= 4
    a = write_authors_csv(tmp_path / 'authors_1.csv', rec)
    for f in (p, z, a):
        for use_sidecar in (None, False):
            back = read_run(f, sidecar=use_sidecar)
            for k in ('se_t', 'se_v', 'gt_t', 'gt_v'):
                np.testing.assert_array_equal(getattr(back, k), getattr(rec, k))
    # empty cells inside the run (not trailing) are still an error
    lines = p.read_text().splitlines()
    lines[3] = _set_cell([lines[3]], 0, 0, '')[0]
    p.write_text('\n'.join(lines) + '\n')
    with pytest.raises(RunFileError, match='empty or not finite'):
        read_run(p)


def test_empty_padding_needs_no_slow_parse(tmp_path):
    """A padded file takes numpy's parser (the fast path), not the cell-by-cell one."""
    import vepd_ros.runs.format as fmt

    rec = RunRecord(np.arange(5.0), np.ones(5), np.arange(3.0), np.ones(3))
    p = write_run(tmp_path / 'circle_1.csv', rec)
    calls = []
    orig = fmt.NUMBER_RE
    try:

        class Spy:

            def fullmatch(self, s):
                calls.append(s)
                return orig.fullmatch(s)

        fmt.NUMBER_RE = Spy()
        read_run(p)
    finally:
        fmt.NUMBER_RE = orig
    assert calls == []

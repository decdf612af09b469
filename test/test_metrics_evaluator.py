# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The evaluator core's one exclusion place: non-finite runs are never scored.

A run whose estimates or truth hold a NaN/inf, or whose simulated sensors produced non-finite
values (the study's sidecar field ``non_finite_sensor_values``), is listed in ``excluded_runs``
with its reason and left out of E, S and the VEPD — the same result as without the run, as a run
with too little coverage. Completeness (contract C2): an interrupted or short study is flagged,
the coverage rule, runs with lost samples excluded and named; a model named real is refused.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import test_runs_format
from test_runs_format import _evaluate
from vepd_ros.metrics.evaluator import (
    coverage_exclusion,
    EvaluatorCore,
    NON_FINITE_SENSORS,
    REFERENCE,
)
from vepd_ros.pipelines.study import judge_batch, run_records, simulate_run
from vepd_ros.runs.batch import evaluate_root
from vepd_ros.runs.safety import output_dir


def _records(label, model, n=3, seed=2):
    sims = [simulate_run(label, model, 'ch_drift_paper', 'circle', j=j, duration_s=6.0, seed=seed)
            for j in range(1, n + 1)]
    est = judge_batch([r.sensors for r in sims], 'builtin')
    return sims, est, run_records(sims, est, {'label': label})


def _score(real, sim):
    core = EvaluatorCore(k=None, n_boot=0)
    core.add_records(REFERENCE, 'circle', real)
    core.add_model('m')
    core.add_records('m', 'circle', sim)
    return core, core.result()


def test_non_finite_estimates_and_sensor_output_are_excluded_with_their_reason():
    _, _, real = _records('real', 'rtk')
    sims, est, sim = _records('m', 'ch_gauss')
    _, clean = _score(real, sim[:2])
    bad = sim[2]
    bad.se_vx[5] = np.nan  # an estimate
    bad.se_v[5] = np.nan
    core, res = _score(real, sim)
    assert res['models']['m']['VEPD'] == clean['models']['m']['VEPD']
    (ex,) = core.excluded
    assert ex['label'] == 'm' and 'estimates: 2 non-finite values' in ex['reason']
    # sensors that produced non-finite output: flagged by the study, excluded here
    sims[2].sensors.imu.angular_velocity[3, 1] = np.inf
    flagged = run_records(sims[2:], est[2:], {'label': 'm'})[0]
    assert flagged.meta[NON_FINITE_SENSORS] == {'imu': 1}
    core, res = _score(real, sim[:2] + [flagged])
    assert res['models']['m']['VEPD'] == clean['models']['m']['VEPD']
    assert 'sensor output not finite (imu: 1 values)' in core.excluded[0]['reason']
    assert res['complete'] is False and res['excluded_runs'] == core.excluded


def test_finite_runs_carry_no_flag():
    _, _, recs = _records('m', 'ch_rw', n=1)
    assert NON_FINITE_SENSORS not in recs[0].meta


def test_evaluate_excludes_a_run_file_with_written_nan_and_names_it(tmp_path):
    """A run file holding 'nan' inside the run: excluded with the reason, as without the file."""
    from vepd_ros.runs.batch import evaluate_root
    from vepd_ros.pipelines.study import run_study

    run_study(['ch_rw'], ['circle'], 3, duration_s=4.0, reference='rtk', out_dir=tmp_path, seed=1,
              workers=1, n_boot=0)
    path = tmp_path / 'Sim' / 'ch_rw' / 'circle_2.csv'
    lines = path.read_text().splitlines()
    cells = lines[6].split(',')
    cells[2] = 'nan'  # se_vel
    lines[6] = ','.join(cells)
    path.write_text('\n'.join(lines) + '\n')
    res = evaluate_root(tmp_path, n_boot=0)
    (ex,) = res['excluded_runs']
    assert ex['path'] == str(path) and ex['label'] == 'ch_rw' and 'not finite' in ex['reason']
    assert res['complete'] is False and res['k']['ch_rw']['circle'] == 2
    path.unlink()
    path.with_suffix('.json').unlink()
    assert evaluate_root(tmp_path, n_boot=0, k=3)['models']['ch_rw']['VEPD'] == \
        res['models']['ch_rw']['VEPD']


root = test_runs_format.root  # the fixture, defined once


def test_interrupted_study_is_flagged(root, capsys):
    with output_dir(
        root,
        command='study',
        overwrite=True,
        info={
            'plan': {'runs': 3, 'models': ['ch_rw', 'airsim'], 'scenarios': ['straight', 'circle']}
        },
    ):
        pass
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


def test_result_is_always_valid_json():
    core = EvaluatorCore(k=3, n_boot=50)
    core.add_values('real', 'circle', [0.1, 0.2, 0.3], [0.01, 0.02, 0.03])
    core.add_values('m', 'circle', [0.2, 0.3, 0.4], [0.02, 0.03, 0.05])
    json.dumps(core.result(), allow_nan=False)
    with pytest.raises(ValueError):
        core.add_values('m2', 'circle', [0.2, np.nan, 0.4], [0.02, 0.03, 0.05])
        core.result()

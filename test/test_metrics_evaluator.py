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
with too little coverage.
"""

from __future__ import annotations

import numpy as np
from vepd_ros.metrics.evaluator import EvaluatorCore, NON_FINITE_SENSORS, REFERENCE
from vepd_ros.pipelines.study import judge_batch, run_records, simulate_run


def _records(label, model, n=3, seed=2):
    sims = [simulate_run(label, model, 'ch_drift_paper', 'circle', j, 6.0, seed)
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
    from vepd_ros.metrics.evaluator import evaluate_root
    from vepd_ros.pipelines.study import run_study

    run_study(['ch_rw'], ['circle'], 3, 4.0, 'rtk', tmp_path, seed=1, workers=1, n_boot=0)
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

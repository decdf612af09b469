# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test that non-finite metric inputs or results are errors; property tests.

Issue 17, metrics: a non-finite input or result is an error, never NaN/Infinity in a result; and
a property-based suite (hypothesis, bounded and derandomized: the same examples every run) over the
run readers, the metric functions and the bootstrap.
"""

from __future__ import annotations

import json

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from vepd_ros.metrics.core import (
    batch_metrics,
    moving_average,
    run_metrics,
    RunDataError,
    spectral_flatness,
)
from vepd_ros.metrics.evaluator import EvaluatorCore
from vepd_ros.metrics.vepd import bootstrap_vepd, rank, vepd
from vepd_ros.runs.format import read_run, RunFileError, RunRecord, write_run

PROPS = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _run(n=60, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    se_t = np.arange(n) / 35.0
    gt_t = np.arange(int(n * 25 / 35)) / 25.0
    return se_t, scale * (1 + 0.1 * rng.standard_normal(n)), gt_t, scale * np.ones(gt_t.size)


@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize('where', [0, 1, 2, 3])
def test_metric_functions_refuse_non_finite_input(bad, where):
    a = [x.copy() for x in _run()]
    a[where][5] = bad
    with pytest.raises(RunDataError, match='not finite'):
        run_metrics(*a, name='r1')
    with pytest.raises(RunDataError, match='r1'):
        batch_metrics(*[[x] for x in a], names=['r1'])


def test_huge_finite_values_are_an_error_not_infinity():
    se_t, se_v, gt_t, gt_v = _run(scale=1e300)
    se_v = -se_v
    with pytest.raises(RunDataError, match='not finite'):
        run_metrics(se_t, se_v, gt_t, gt_v, name='big')
    with pytest.raises(RunDataError, match='big'):
        batch_metrics([se_t], [se_v], [gt_t], [gt_v], names=['big'])


def test_epoch_stamps_are_refused_before_allocating():
    se_t, se_v, gt_t, gt_v = _run()
    with pytest.raises(RunDataError, match='more than'):
        run_metrics(se_t + 1.7e9, se_v, gt_t + 1.7e9, gt_v, name='epoch')
    with pytest.raises(RunDataError, match='epoch'):
        batch_metrics([se_t * 1e8], [se_v], [gt_t * 1e8], [gt_v], names=['epoch'])


def test_small_helpers_refuse_nan():
    with pytest.raises(ValueError, match='NaN'):
        spectral_flatness(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match='NaN'):
        moving_average(np.array([1.0, np.inf, 2.0]), 2)


def test_vepd_rank_and_bootstrap_refuse_bad_input():
    ok = np.array([0.1, 0.2, 0.3])
    for args in ([[], ok, ok, ok], [ok, [np.nan, 1.0], ok, ok], [ok, ok, ok, [np.inf]]):
        with pytest.raises(ValueError):
            vepd(*args)
    with pytest.raises(ValueError, match='not finite'):
        vepd([-1e308, 1e308], ok, [1e308, -1e308], ok)
    with pytest.raises(ValueError, match='empty'):
        bootstrap_vepd([], [], [], [], [], [], n_boot=10)
    with pytest.raises(ValueError, match='NaN'):
        bootstrap_vepd(ok, ok, [0, 0, 0], [np.nan, 1, 2], ok, [0, 0, 0], n_boot=10)
    with pytest.raises(ValueError, match='group'):
        bootstrap_vepd(ok, ok, [0, 0], ok, ok, [0, 0, 0], n_boot=10)
    with pytest.raises(ValueError, match='finite'):
        rank({'a': 1.0, 'b': float('nan')})


def test_result_is_always_valid_json():
    core = EvaluatorCore(k=3, n_boot=50)
    core.add_values('real', 'circle', [0.1, 0.2, 0.3], [0.01, 0.02, 0.03])
    core.add_values('m', 'circle', [0.2, 0.3, 0.4], [0.02, 0.03, 0.05])
    json.dumps(core.result(), allow_nan=False)
    with pytest.raises(ValueError):
        core.add_values('m2', 'circle', [0.2, np.nan, 0.4], [0.02, 0.03, 0.05])
        core.result()


# -------------------------------------------------------------------------------------------
# properties

_cells = st.text(alphabet='0123456789.,-+eE_ \n\tnaif', max_size=300)
HEADER = 'se_time,gt_time,se_vel,gt_vel\n'


@PROPS
@given(body=st.one_of(_cells.map(str.encode), st.binary(max_size=300)), header=st.booleans())
def test_reading_any_csv_bytes_gives_a_run_or_a_run_file_error(tmp_path_factory, body, header):
    p = tmp_path_factory.mktemp('csv') / 'circle_1.csv'
    p.write_bytes((HEADER.encode() if header else b'') + body)
    try:
        rec = read_run(p)
    except RunFileError as exc:
        assert str(p) in str(exc) and len(str(exc)) < 1000
        return
    for t in (rec.se_t, rec.gt_t):
        assert np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)


@PROPS
@given(
    side=st.binary(max_size=200)
    | st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(st.sampled_from(['se_len', 'gt_len', 'x']), c, max_size=3)
        ),
        max_leaves=8,
    ).map(lambda o: json.dumps(o).encode())
)
def test_reading_any_sidecar_gives_a_run_or_a_run_file_error(tmp_path_factory, side):
    d = tmp_path_factory.mktemp('side')
    rec = RunRecord(np.arange(5.0), np.ones(5), np.arange(3.0), np.ones(3))
    p = write_run(d / 'circle_1.csv', rec)
    p.with_suffix('.json').write_bytes(side)
    try:
        back = read_run(p)
    except RunFileError as exc:
        assert 'circle_1' in str(exc) and len(str(exc)) < 1000
        return
    assert len(back.se_t) == back.meta['se_len'] and len(back.gt_t) == back.meta['gt_len']


_speeds = st.floats(-1e3, 1e3, allow_nan=False)


@st.composite
def _runs(draw):
    n_se, n_gt = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    dt_se = draw(st.lists(st.floats(1e-3, 2.0), min_size=n_se, max_size=n_se))
    dt_gt = draw(st.lists(st.floats(1e-3, 2.0), min_size=n_gt, max_size=n_gt))
    se_t = np.cumsum(dt_se) - dt_se[0]
    gt_t = np.cumsum(dt_gt) - dt_gt[0]
    se_v = np.array(draw(st.lists(_speeds, min_size=n_se, max_size=n_se)))
    gt_v = np.array(draw(st.lists(_speeds, min_size=n_gt, max_size=n_gt)))
    return se_t, se_v, gt_t, gt_v


@PROPS
@given(run=_runs())
def test_finite_input_gives_finite_metrics_or_a_run_data_error(run):
    try:
        e, s = run_metrics(*run, name='r')
    except RunDataError as exc:
        assert 'r' in str(exc)
        with pytest.raises(RunDataError):
            batch_metrics(*[[x] for x in run], names=['r'])
        return
    assert np.isfinite(e) and np.isfinite(s) and e >= 0 and s >= 0
    E, S = batch_metrics(*[[x] for x in run], names=['r'])
    assert np.isclose(E[0], e, rtol=1e-9, atol=1e-12)
    assert np.isclose(S[0], s, rtol=1e-9, atol=1e-12)


@PROPS
@given(
    run=_runs(),
    where=st.integers(0, 3),
    i=st.integers(0, 100),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
)
def test_non_finite_input_is_always_an_error(run, where, i, bad):
    run = [np.array(x, float) for x in run]
    run[where][i % run[where].size] = bad
    with pytest.raises(RunDataError):
        run_metrics(*run)
    with pytest.raises(RunDataError):
        batch_metrics(*[[x] for x in run])


_vals = st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=12)


@PROPS
@given(rE=_vals, sE=_vals, seed=st.integers(0, 2**32 - 1))
def test_bootstrap_interval_is_finite_and_ordered(rE, sE, seed):
    rS, sS = list(reversed(rE)), list(reversed(sE))
    rg, sg = np.zeros(len(rE)), np.zeros(len(sE))
    lo, hi = bootstrap_vepd(rE, rS, rg, sE, sS, sg, n_boot=20, seed=seed)
    assert np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi
    v = vepd(rE, rS, sE, sS)
    assert all(np.isfinite(x) and x >= 0 for x in v.values())
    again = bootstrap_vepd(rE, rS, rg, sE, sS, sg, n_boot=20, seed=seed)
    assert again == (lo, hi)  # seeded: same bits


@PROPS
@given(rE=_vals, i=st.integers(0, 11), bad=st.sampled_from([np.nan, np.inf]))
def test_bootstrap_refuses_non_finite(rE, i, bad):
    sE = list(rE)
    sE[i % len(sE)] = bad
    with pytest.raises(ValueError):
        bootstrap_vepd(rE, rE, np.zeros(len(rE)), sE, rE, np.zeros(len(sE)), n_boot=5)
    with pytest.raises(ValueError):
        vepd(rE, rE, sE, rE)

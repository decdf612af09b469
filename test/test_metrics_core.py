# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Per-run E and S, W1/W2/VEPD and ranks equal design.md §6 (the authors' computeEPD.py algorithm).

The reference below restates §6 step by step on plain lists, independently of the package, and
reads the authors' files the way their script does — except that it strips only trailing zero
padding (their reader dropped every 0.0; we check separately that this difference matters and that
we don't copy it).
"""

from __future__ import annotations

import csv
import math

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
from scipy.stats import wasserstein_distance
from test_runs_format import PROPS
from vepd_ros.metrics import (
    batch_metrics,
    bootstrap_vepd,
    rank,
    resample_run,
    run_metrics,
    RunDataError,
    spectral_flatness,
    vepd,
    wasserstein_weighted_batch,
)
from vepd_ros.metrics.core import moving_average
from vepd_ros.metrics.evaluator import EvaluatorCore
from vepd_ros.runs.batch import evaluate_root
from vepd_ros.testing.synthetic_runs import AUTHORS_FOLDERS, synthetic_run, write_synthetic_root


# ------------------------------------------------------------------------------------------
# reference
def ref_read(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    cols = {k: [float(r[k]) for r in rows] for k in ('se_time', 'gt_time', 'se_vel', 'gt_vel')}
    for pre in ('se', 'gt'):
        t, v = cols[f'{pre}_time'], cols[f'{pre}_vel']
        while len(t) > 1 and t[-1] == 0.0 and v[-1] == 0.0:
            t.pop()
            v.pop()
    return cols['se_time'], cols['gt_time'], cols['se_vel'], cols['gt_vel']


def ref_E_S(se_time, gt_time, se_vel, gt_vel):
    grid = np.arange(0, min(gt_time[-1], se_time[-1]), 1 / 15)
    gt = np.interp(grid, gt_time, gt_vel)
    se_v = np.convolve(se_vel, np.ones(2) / 2.0, 'valid')
    se_t = np.convolve(se_time, np.ones(2) / 2.0, 'valid')
    se = np.interp(grid, se_t, se_v)
    E = np.sqrt(np.square(np.subtract(gt, se)).mean())

    def sf(x):
        X = np.fft.fft(x)
        if (
            np.mean(np.abs(X)) == 0
        ):  # all-zero truth at rest: the script divides by zero; we define 1.0
            return 1.0
        return np.exp(np.mean(np.log(np.abs(X) + 1e-10))) / np.mean(np.abs(X))

    return E, abs(sf(gt) - sf(se))


@pytest.fixture(scope='module')
def authors_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('data2')
    return write_synthetic_root(root, 'authors', k=10, seed=3, duration_s=12.0)


def test_every_intermediate_equals_the_reference_on_authors_layout(authors_root):
    res = evaluate_root(authors_root, include_runs=True, n_boot=200)
    assert res['velocity'] == 'speed'
    assert res['combined_scenarios'] == ['path', 'circle', 'sine']
    assert res['excluded_from_combined'] == ['rest']
    ref = {}
    for side, folder in [('real', authors_root / 'Real')] + [
        (f[:-8], authors_root / 'Sim' / f) for f in AUTHORS_FOLDERS
    ]:
        for sc in ('rest', 'path', 'circle', 'sine'):
            es = np.array([ref_E_S(*ref_read(folder / f'{sc}_{j}.csv')) for j in range(1, 11)])
            ref[side, sc] = es
            got = res['runs'][side][sc]
            np.testing.assert_allclose(got['E'], es[:, 0], rtol=1e-12, atol=0)
            np.testing.assert_allclose(got['S'], es[:, 1], rtol=1e-9, atol=1e-15)
    names = {
        'chNormal': 'Ch:Gauss',
        'chWalk': 'Ch:RW',
        'AirSim': 'AirSim',
        'chNormal_AirSim': 'Ch:Gauss+AirSim',
        'chWalk_AirSim': 'Ch:RW+AirSim',
    }
    assert list(res['models']) == list(names)
    per_vepd = {sc: {} for sc in ('path', 'circle', 'sine')}
    for m, e in res['models'].items():
        assert e['display_name'] == names[m]
        for sc in ('rest', 'path', 'circle', 'sine'):
            w1 = wasserstein_distance(ref[m, sc][:, 0], ref['real', sc][:, 0])
            w2 = wasserstein_distance(ref[m, sc][:, 1], ref['real', sc][:, 1])
            p = e['per_scenario'][sc]
            assert p['W1'] == pytest.approx(w1, rel=1e-9, abs=1e-14)
            assert p['W2'] == pytest.approx(w2, rel=1e-7, abs=1e-12)
            assert p['VEPD'] == pytest.approx((w1 + w2) / 2, rel=1e-7, abs=1e-12)
            if sc != 'rest':
                per_vepd[sc][m] = (w1 + w2) / 2
        cE = np.concatenate([ref[m, s][:, 0] for s in ('path', 'circle', 'sine')])
        cS = np.concatenate([ref[m, s][:, 1] for s in ('path', 'circle', 'sine')])
        rE = np.concatenate([ref['real', s][:, 0] for s in ('path', 'circle', 'sine')])
        rS = np.concatenate([ref['real', s][:, 1] for s in ('path', 'circle', 'sine')])
        assert e['W1'] == pytest.approx(wasserstein_distance(cE, rE), rel=1e-9)
        assert e['W2'] == pytest.approx(wasserstein_distance(cS, rS), rel=1e-7, abs=1e-12)
        assert e['VEPD'] == pytest.approx((e['W1'] + e['W2']) / 2, rel=1e-15)
        lo, hi = e['ci95']
        assert 0 <= lo <= hi
    for sc, d in per_vepd.items():  # ranks: 1 = lowest VEPD (pandas rank of the authors)
        order = sorted(d, key=d.get)
        for r, m in enumerate(order, 1):
            assert res['models'][m]['per_scenario'][sc]['rank'] == r
    assert res['k'] == {
        side: dict.fromkeys(('rest', 'path', 'circle', 'sine'), 10)
        for side in ['real'] + list(names)
    }
    assert res['warnings'] == []


def test_their_reader_bug_is_not_reproduced(tmp_path):
    """
    True zero speeds in the truth are kept (the authors' reader dropped them).

    A run whose truth has true zero speeds at the start (parked) and a stop mid-run: dropping every
    0.0 (the authors' reader) desynchronises times and speeds; we keep every true sample.
    """
    from vepd_ros.runs import read_run
    from vepd_ros.testing.synthetic_runs import write_authors_csv

    rng = np.random.default_rng(0)
    rec = synthetic_run(rng, 'path', 10.0)
    rec.gt_v[100:110] = 0.0  # stops mid-run too
    p = write_authors_csv(tmp_path / 'path_1.csv', rec)
    back = read_run(p)
    np.testing.assert_array_equal(back.gt_t, rec.gt_t)
    np.testing.assert_array_equal(back.gt_v, rec.gt_v)
    assert (back.gt_v == 0).sum() > 10 and back.gt_t[0] == 0.0
    ours = run_metrics(back.se_t, back.se_v, back.gt_t, back.gt_v)
    assert ours == pytest.approx(ref_E_S(*ref_read(p)), rel=1e-12)
    with open(p) as f:
        rows = list(csv.DictReader(f))
    bug_t = [float(r['gt_time']) for r in rows if float(r['gt_time']) != 0.0]
    bug_v = [float(r['gt_vel']) for r in rows if float(r['gt_vel']) != 0.0]
    assert len(bug_t) != len(bug_v)  # their lists no longer pair up


def test_batch_equals_single_run_for_ragged_real_and_complex_signals():
    rng = np.random.default_rng(7)
    runs = [
        synthetic_run(rng, sc, d, se_rate_hz=r1, gt_rate_hz=r2)
        for sc, d, r1, r2 in [
            ('circle', 5.0, 35, 25),
            ('sine', 7.3, 30, 5),
            ('path', 3.1, 50, 100),
            ('rest', 4.0, 35, 10),
        ]
        * 5
    ]
    gap = synthetic_run(rng, 'sine', 9.0)  # irregular stamps: a 3 s dropout and a burst
    keep = (gap.gt_t < 2.0) | (gap.gt_t > 5.0)
    for f in ('gt_t', 'gt_v', 'gt_vx', 'gt_vy'):
        setattr(gap, f, getattr(gap, f)[keep])
    burst = np.sort(np.r_[gap.se_t, np.linspace(1.0, 1.01, 50)])
    gap.se_vx, gap.se_vy = (
        np.interp(burst, gap.se_t, gap.se_vx),
        np.interp(burst, gap.se_t, gap.se_vy),
    )
    gap.se_v, gap.se_t = np.hypot(gap.se_vx, gap.se_vy), burst
    runs.insert(3, gap)
    for velocity in ('speed', 'vx', 'vector'):
        for pre in ('paper', 'unsmoothed'):
            sig = [r.signal(velocity) for r in runs]
            E, S = batch_metrics(
                *[[s[i] for s in sig] for i in range(4)], preprocessing=pre, chunk_samples=600
            )
            ref = np.array([run_metrics(*s, preprocessing=pre) for s in sig])
            np.testing.assert_allclose(E, ref[:, 0], rtol=1e-12)
            np.testing.assert_allclose(S, ref[:, 1], rtol=1e-9, atol=1e-15)


def test_vector_form_reduces_to_speed_when_motion_is_forward():
    rng = np.random.default_rng(1)
    r = synthetic_run(rng, 'path', 6.0, noise=0.0)
    r.se_vy[:] = 0.0
    r.se_vx[:] = np.abs(r.se_vx)
    r.se_v = np.abs(r.se_vx)
    a = run_metrics(*r.signal('speed'))
    b = run_metrics(*r.signal('vector'))
    c = run_metrics(*r.signal('vx'))
    assert a == pytest.approx(b, rel=1e-9) and a == pytest.approx(c, rel=1e-12)


def test_grid_and_smoothing_follow_the_paper():
    se_t = np.array([0.0, 0.1, 0.2, 0.3, 0.5])
    se_v = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    gt_t = np.array([0.0, 0.25, 0.4])
    gt_v = np.array([0.0, 1.0, 2.0])
    grid, se, gt = resample_run(se_t, se_v, gt_t, gt_v)
    np.testing.assert_array_equal(grid, np.arange(0, 0.4, 1 / 15))  # end excluded
    # smoothed estimate: stamps (0.05, 0.15, 0.25, 0.4), values (2, 4, 6, 8); held before 0.05
    np.testing.assert_allclose(se, np.interp(grid, [0.05, 0.15, 0.25, 0.4], [2, 4, 6, 8]))
    np.testing.assert_allclose(gt, np.interp(grid, gt_t, gt_v))


def test_spectral_flatness():
    assert spectral_flatness(np.zeros(64)) == 1.0  # defined (the script divides by zero)
    x = np.ones(64)
    assert spectral_flatness(x) == pytest.approx(
        math.exp((math.log(64) + 63 * math.log(1e-10)) / 64) / 1.0
    )
    rng = np.random.default_rng(0)
    assert 0.7 < spectral_flatness(rng.standard_normal(4096)) < 0.95  # white noise: flat spectrum


@pytest.mark.parametrize(
    'bad, msg',
    [
        ({'se_t': [0.0, 1.0]}, 'at least 3'),
        ({'gt_t': [0.0], 'gt_v': [1.0]}, 'at least 2'),
        ({'gt_v': [0.0, np.nan, 1.0, 1.0]}, 'not finite'),
        ({'gt_t': [0.0, 0.5, 0.4, 1.0]}, 'backwards'),
        ({'se_t': [0.0, 0.01, 0.02, 0.05], 'se_v': [1, 1, 1, 1.0]}, 'grid point'),
    ],
)
def test_bad_runs_raise_clear_errors(bad, msg):
    a = {
        'se_t': np.linspace(0, 2, 10),
        'se_v': np.ones(10),
        'gt_t': [0.0, 0.5, 1.0, 2.0],
        'gt_v': [0.0, 1, 1, 1.0],
    }
    a.update(bad)
    if 'se_t' in bad and 'se_v' not in bad:
        a['se_v'] = np.ones(len(bad['se_t']))
    with pytest.raises(RunDataError, match=msg):
        run_metrics(a['se_t'], a['se_v'], a['gt_t'], a['gt_v'], name='X.csv')
    with pytest.raises(RunDataError, match=msg):
        batch_metrics(
            [np.asarray(a['se_t'], float)],
            [np.asarray(a['se_v'], float)],
            [np.asarray(a['gt_t'], float)],
            [np.asarray(a['gt_v'], float)],
            names=['X.csv'],
        )


def test_vepd_and_rank():
    v = vepd([0.1, 0.2, 0.3], [0.01, 0.02, 0.03], [0.2, 0.3, 0.4], [0.01, 0.02, 0.03])
    assert v == pytest.approx({'W1': 0.1, 'W2': 0.0, 'VEPD': 0.05})
    assert rank({'a': 0.3, 'b': 0.1, 'c': 0.3, 'd': 0.2}) == {'a': 3.5, 'b': 1, 'c': 3.5, 'd': 2}


def test_weighted_wasserstein_matches_scipy_and_bootstrap_is_seeded():
    rng = np.random.default_rng(5)
    u, v = rng.random(30), rng.random(20) + 0.1
    wu, wv = (
        rng.integers(0, 4, (7, 30)).astype(float) + 0.5,
        rng.integers(0, 4, (7, 20)).astype(float),
    )
    got = wasserstein_weighted_batch(u, v, wu, wv)
    want = [wasserstein_distance(u, v, wu[b], wv[b]) for b in range(7)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = np.repeat([0, 1, 2], 10)
    a = bootstrap_vepd(
        u, u * 0.1, g, v[:15].repeat(2), sim_S=v[:15].repeat(2) * 0.1, sim_groups=g,
        n_boot=300, seed=1
    )
    b = bootstrap_vepd(
        u, u * 0.1, g, v[:15].repeat(2), sim_S=v[:15].repeat(2) * 0.1, sim_groups=g,
        n_boot=300, seed=1
    )
    assert a == b and a[0] < a[1]
    # the resampling counts route: unit weights reproduce the point estimate exactly
    from vepd_ros.metrics.vepd import _scaled_counts, _support, _w1_counts

    assert _w1_counts(
        _support(u, v), *_scaled_counts(np.ones((1, 30), np.int32), np.ones((1, 20), np.int32))
    )[0] == pytest.approx(wasserstein_distance(u, v), rel=1e-12)


def test_per_group_intervals_come_from_the_pooled_resamples():
    """
    Per-group intervals of bootstrap_vepd_groups come from the pooled resamples.

    bootstrap_vepd_groups: the pooled interval is bootstrap_vepd's exactly; group g's interval is
    the percentile of VEPD between the real and sim runs of g in each pooled resample (replayed
    here by brute force).
    """
    from vepd_ros.metrics.vepd import _resample_counts, bootstrap_vepd_groups

    rng = np.random.default_rng(1)
    rE, rS, sE, sS = rng.random(12), rng.random(12), rng.random(10) + 0.1, rng.random(10)
    rg, sg = np.repeat(['circle', 'sine'], [5, 7]), np.repeat(['circle', 'sine'], [4, 6])
    pooled, per = bootstrap_vepd_groups(rE, rS, rg, sE, sS, sim_groups=sg, n_boot=200, seed=3)
    assert pooled == bootstrap_vepd(rE, rS, rg, sE, sim_S=sS, sim_groups=sg, n_boot=200, seed=3)
    assert set(per) == {'circle', 'sine'}
    replay = np.random.default_rng(3)
    cr = _resample_counts(replay, np.unique(rg, return_inverse=True)[1], 200)
    cs = _resample_counts(replay, np.unique(sg, return_inverse=True)[1], 200)
    for g in ('circle', 'sine'):
        r, s = rg == g, sg == g
        vals = [
            0.5
            * (
                wasserstein_distance(np.repeat(sE[s], cs[b, s]), np.repeat(rE[r], cr[b, r]))
                + wasserstein_distance(np.repeat(sS[s], cs[b, s]), np.repeat(rS[r], cr[b, r]))
            )
            for b in range(200)
        ]
        np.testing.assert_allclose(per[g], np.percentile(vals, [2.5, 97.5]), rtol=1e-12)


def test_evaluator_core_streams_runs_and_reports_readiness():
    rng = np.random.default_rng(2)
    core = EvaluatorCore(k=3, n_boot=50)
    core.add_model('ch_rw', 'Ch:RW')
    assert not core.ready()
    for sc in ('straight', 'circle'):
        for _ in range(3):
            core.add_run('real', sc, synthetic_run(rng, sc, 4.0))
            assert not core.ready() or sc == 'circle'
            core.add_run('ch_rw', sc, synthetic_run(rng, sc, 4.0))
    assert core.ready()
    res = core.result()
    assert res['k'] == {
        'ch_rw': {'straight': 3, 'circle': 3},
        'real': {'straight': 3, 'circle': 3},
    }
    assert res['models']['ch_rw']['display_name'] == 'Ch:RW'
    assert set(res['models']['ch_rw']['per_scenario']) == {'straight', 'circle'}


def test_evaluator_warns_on_unequal_k_and_missing_scenarios_and_errors_below_two():
    rng = np.random.default_rng(3)
    core = EvaluatorCore(n_boot=0)
    for _ in range(4):
        core.add_run('real', 'circle', synthetic_run(rng, 'circle', 4.0))
        core.add_run('real', 'sine', synthetic_run(rng, 'sine', 4.0))
    for _ in range(3):
        core.add_run('m', 'circle', synthetic_run(rng, 'circle', 4.0))
    res = core.result()
    w = '\n'.join(res['warnings'])
    assert 'K differs' in w and "no runs of scenario 'sine'" in w
    assert res['models']['m']['combined_scenarios'] == ['circle']
    core.add_run('m2', 'circle', synthetic_run(rng, 'circle', 4.0))
    with pytest.raises(ValueError, match='1 run'):
        core.result()


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
        bootstrap_vepd([], [], [], [], sim_S=[], sim_groups=[], n_boot=10)
    with pytest.raises(ValueError, match='NaN'):
        bootstrap_vepd(ok, ok, [0, 0, 0], [np.nan, 1, 2], sim_S=ok, sim_groups=[0, 0, 0],
                       n_boot=10)
    with pytest.raises(ValueError, match='group'):
        bootstrap_vepd(ok, ok, [0, 0], ok, sim_S=ok, sim_groups=[0, 0, 0], n_boot=10)
    with pytest.raises(ValueError, match='finite'):
        rank({'a': 1.0, 'b': float('nan')})


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
    lo, hi = bootstrap_vepd(rE, rS, rg, sE, sim_S=sS, sim_groups=sg, n_boot=20, seed=seed)
    assert np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi
    v = vepd(rE, rS, sE, sS)
    assert all(np.isfinite(x) and x >= 0 for x in v.values())
    again = bootstrap_vepd(rE, rS, rg, sE, sim_S=sS, sim_groups=sg, n_boot=20, seed=seed)
    assert again == (lo, hi)  # seeded: same bits


@PROPS
@given(rE=_vals, i=st.integers(0, 11), bad=st.sampled_from([np.nan, np.inf]))
def test_bootstrap_refuses_non_finite(rE, i, bad):
    sE = list(rE)
    sE[i % len(sE)] = bad
    with pytest.raises(ValueError):
        bootstrap_vepd(rE, rE, np.zeros(len(rE)), sE, sim_S=rE, sim_groups=np.zeros(len(sE)),
                       n_boot=5)
    with pytest.raises(ValueError):
        vepd(rE, rE, sE, rE)

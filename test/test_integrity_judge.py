# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the judge's message layer under bad input: drop and count, never raise.

The judge's message layer under bad input (issue 17): a bad message is dropped and counted per
reason, never raised, never carried into a NaN state, and no numpy warning escapes; valid input is
unchanged.
"""

import copy
import math
import warnings

import numpy as np
import pytest
from test_judge_core_msgs import imu_msg, odom_msg
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.judge.filter import RosFilter
from vepd_ros.judge.measurements import MeasurementBuilder
from vepd_ros.judge.navsat import NavSatCore

CFG = {
    'ekf_filter_node': {
        'ros__parameters': {
            'frequency': 30.0,
            'two_d_mode': False,
            'imu0': '/imu',
            'imu0_config': [False] * 3 + [True] * 3 + [False] * 3 + [True] * 3 + [True] * 3,
            'imu0_remove_gravitational_acceleration': True,
            'odom0': '/odom',
            'odom0_config': [True] * 3 + [False] * 3 + [True] * 3 + [False] * 6,
        }
    }
}


T0 = 100 * 10**9


def _stream(n=40):
    return [
        ('imu0', imu_msg(T0 + i * 10**7))
        if i % 2
        else ('odom0', odom_msg(T0 + i * 10**7, v=(1.0, 0.0, 0.0)))
        for i in range(n)
    ]


def _run(msgs):
    f = RosFilter(load_ekf_params(CFG))
    out = None
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no numpy RuntimeWarning may escape
        for i, (sensor, m) in enumerate(msgs):
            f.feed(sensor, m)
            out = f.tick(T0 + i * 10**7 + 1) or out  # ticks at arrival (the stamp may lie)
    return f, out


def _q(m, q):
    for a, v in zip('xyzw', q):
        setattr(m.orientation, a, v)


CASES = {
    # robot_localization normalises these to NaN (0·(1/0), 1e200·(1/inf)): entries ignored
    'quaternion 1e-200': (21, lambda m: _q(m, (1e-200, 0.0, 0.0, 0.0)), 'non-finite'),
    'quaternion NaN': (21, lambda m: setattr(m.orientation, 'w', math.nan), 'non-finite'),
    'quaternion 1e200': (21, lambda m: setattr(m.orientation, 'x', 1e200), 'non-finite'),
    'accel covariance NaN': (
        21,
        lambda m: m.linear_acceleration_covariance.__setitem__(4, math.nan),
        'covariance',
    ),
    'gyro covariance Inf': (
        21,
        lambda m: m.angular_velocity_covariance.__setitem__(0, math.inf),
        'covariance',
    ),
    # upstream fuses any finite value; these its gate rejects (d² overflows DBL_MAX² = inf)
    'accel 1e300': (21, lambda m: setattr(m.linear_acceleration, 'x', 1e300), 'overflows'),
    'gyro 1e300': (21, lambda m: setattr(m.angular_velocity, 'z', 1e300), 'overflows'),
    'gyro Inf': (21, lambda m: setattr(m.angular_velocity, 'z', math.inf), 'non-finite'),
    'odom position 1e300': (
        20,
        lambda m: setattr(m.pose.pose.position, 'x', 1e300),
        'overflows',
    ),
    'odom covariance NaN': (
        20,
        lambda m: m.pose.covariance.__setitem__(0, math.nan),
        'covariance',
    ),
    'odom velocity NaN': (
        20,
        lambda m: setattr(m.twist.twist.linear, 'x', math.nan),
        'non-finite',
    ),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_bad_message_dropped_and_counted_single_message_path(case):
    i, poison, reason = CASES[case]
    msgs = copy.deepcopy(_stream())
    poison(msgs[i][1])
    f, out = _run(msgs)
    assert np.isfinite(out.x).all() and np.isfinite(out.P).all()
    assert any(reason in k for k in f.dropped), f.dropped


def test_huge_finite_covariance_is_fused_as_upstream():
    """A finite covariance of 1e300 is robot_localization's to fuse: counted, and kept."""
    msgs = copy.deepcopy(_stream())
    msgs[20][1].pose.covariance[0] = 1e300
    f, out = _run(msgs)
    assert list(f.dropped) == [
        'odom0_pose: covariance beyond 1e+30 (kept: robot_localization takes it)'
    ]
    assert np.isfinite(out.x).all() and np.isfinite(out.P).all()


def test_valid_stream_counts_nothing_and_is_unchanged():
    f, out = _run(_stream())
    assert f.dropped == {}
    g, out2 = _run(_stream())
    assert out.x.tobytes() == out2.x.tobytes()


def test_zero_quaternion_is_identity_as_upstream():
    """
    Read an all-zero orientation as identity, but remove gravity with NaN (upstream's reading).

    preparePose reads an all-zero quaternion as identity (kept and counted, as upstream's
    diagnostic says it); prepareAcceleration normalises it (0·(1/0) = NaN), so its acceleration
    entries are ignored, and counted.
    """
    msgs = _stream()
    for a in 'xyzw':
        setattr(msgs[21][1].orientation, a, 0.0)
    f, out = _run(msgs)
    assert f.dropped == {
        'imu0_acceleration: non-finite values (entries ignored)': 1,
        'imu0_pose: all-zero orientation quaternion read as identity (kept: robot_localization '
        'corrects it so)': 1,
    }
    assert np.isfinite(out.x).all()


def test_batch_path_tiny_quaternion_ignored_and_counted():
    """
    A tiny quaternion gives NaN entries on the array path too, ignored and counted.

    The array path (K runs at once) reads the same quaternion as the message path does (NaN after
    upstream's normalisation), keeps the sample and counts it, without warnings.
    """
    b = MeasurementBuilder(load_ekf_params(CFG))
    n, k = 5, 3
    q = np.tile([0.0, 0.0, 0.0, 1.0], (k, n, 1))
    q[1, 2] = (1e-200, 0.0, 0.0, 0.0)
    cov = np.tile(np.eye(3).ravel() * 1e-4, (k, n, 1))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        series = b.imu_arrays(
            'imu0',
            np.arange(1, n + 1) * 10**8,
            q,
            np.zeros((k, n, 3)),
            np.tile([0.0, 0.0, 9.8], (k, n, 1)),
            cov,
            cov,
            cov,
        )
    pose = [s for s in series if s.topic == 'imu0_pose'][0]
    assert len(pose) == n
    assert np.isnan(pose.z[1, 2, 3:6]).all() and np.isfinite(np.delete(pose.z[1], 2, 0)).all()
    assert b.dropped == {
        'imu0_pose: non-finite values (entries ignored)': 1,
        'imu0_acceleration: non-finite values (entries ignored)': 1,
    }


def test_out_of_order_imu_stamp_dropped_and_counted():
    msgs = _stream()
    m = msgs[21][1]
    t = m.header.stamp.sec * 10**9 + m.header.stamp.nanosec - 5 * 10**9
    m.header.stamp.sec, m.header.stamp.nanosec = t // 10**9, t % 10**9
    f, out = _run(msgs)
    # pose, twist, acceleration parts
    assert sum(v for k, v in f.dropped.items() if 'older' in k) == 3
    last = msgs[-1][1].header.stamp
    assert out.stamp_ns == last.sec * 10**9 + last.nanosec


def test_update_that_would_go_non_finite_is_refused_and_counted():
    """
    Keep the state and count it when a covariance makes the gain overflow.

    A covariance that is finite but makes the gain overflow: the EKF keeps its state and counts
    it.
    """
    from vepd_ros.judge.ekf import Ekf, index_set

    e = Ekf()
    e.initialise(0, np.zeros(15), np.eye(15), [True] * 15)
    e.P = np.full((1, 15, 15), 1e200)
    s = index_set([i < 3 for i in range(15)])
    x0, P0 = e.x.copy(), e.P.copy()
    with warnings.catch_warnings():
        # the overflow inside the products
        warnings.filterwarnings('ignore', category=RuntimeWarning)
        assert not e.correct_k1_checked(s, [1e9, 1e9, 1e9], np.eye(3) * 1e-9)
    assert e.x.tobytes() == x0.tobytes() and e.P.tobytes() == P0.tobytes()
    assert e.drops == {'update refused: the state would not be finite': 1} or e.drops == {
        'update refused: singular innovation covariance': 1
    }


def test_navsat_counts_bad_fixes():
    nav = NavSatCore({}, k=1)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        nav.on_fix(1, 43.0, -89.0, 260.0, cov=[math.nan] + [0.0] * 8)
        nav.on_fix(2, 200.0, -89.0, 260.0)
        nav.on_fix(3, 43.0, math.inf, 260.0)
        # upstream's "no fix": ignored as upstream does, and counted (issue 17: a NaN latitude
        # in a bag left judge replay's `dropped` empty)
        nav.on_fix(4, math.nan, -89.0, 260.0)
    assert nav.dropped == {
        'fix: position_covariance not finite': 1,
        'fix: latitude beyond ±90° or longitude infinite': 2,
        'fix: latitude/longitude/altitude not a number (ignored, as upstream)': 1,
    }
    assert not nav.gps_updated.any()


@pytest.mark.parametrize('case', ['quaternion', 'acceleration', 'latitude', 'longitude'])
def test_graph_batch_path_drops_and_counts(case):
    """
    Keep the batch judge finite on bad values, counting the drops.

    run_judge_batch (vepd bag, the offline study): the same bad values give a finite state, a
    counted drop and no numpy warning (gravity removal before the message layer, UTM projection of
    a bad fix).
    """
    from vepd_ros.judge.rl_graph import run_judge_batch
    from vepd_ros.testing.judge_inputs import circle_inputs

    imu, gps, _ = circle_inputs(k=1, duration_s=10.0, gps_sigma=0.03, seed=1)
    if case == 'quaternion':
        imu['orientation'][0, 100] = (1e-200, 0.0, 0.0, 0.0)
    elif case == 'acceleration':
        imu['linear_acceleration'][0, 200, 0] = 1e300
    elif case == 'latitude':
        gps['latitude'][0, 40] = 1e300
    else:
        gps['longitude'][0, 40] = math.inf
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        r = run_judge_batch('config/ekf.yaml', 'config/navsat.yaml', imu, gps)
    assert np.isfinite(r['state']).all()
    # acceleration 1e300: config/ekf.yaml gates it (νᵀS⁻¹ν = inf), as upstream: not a drop
    reason = {
        'quaternion': 'non-finite',
        'acceleration': None,
        'latitude': 'latitude beyond',
        'longitude': 'longitude infinite',
    }[case]
    assert reason is None or any(reason in k for k in r['dropped']), r['dropped']


def test_stamp_far_outside_the_recording_is_an_error_not_a_huge_grid():
    """
    Refuse a time span too long for the filter grid before allocating.

    One fix stamped 1e9 s late: the filter's time grid would be 3.5e10 cycles (261 GiB); the
    replay refuses with a ValueError naming the span (judge.rl_graph.MAX_TICKS) before allocating.
    """
    from vepd_ros.judge.rl_graph import MAX_TICKS, run_judge_batch, SpanError
    from vepd_ros.testing.judge_inputs import circle_inputs

    imu, gps, _ = circle_inputs(k=1, duration_s=2.0, seed=1)
    gps['stamp_ns'] = np.array(gps['stamp_ns'], np.int64)
    gps['stamp_ns'][-1] += 10**18
    if 'arrival_ns' in gps:
        gps['arrival_ns'] = gps['stamp_ns']
    with pytest.raises(SpanError, match=f'more than {MAX_TICKS}'):
        run_judge_batch('config/ekf.yaml', 'config/navsat.yaml', imu, gps)


def _golden_copy(shared_data, tmp_path):
    import shutil

    src = shared_data / 'rl_golden' / 's1_circle2d_odom_imu_gps'
    if not src.is_dir():
        pytest.skip('rl_golden data not available')
    d = tmp_path / 'g'
    shutil.copytree(src, d)
    return d


@pytest.mark.parametrize(
    'mutate, words',
    [
        (lambda sc: {**sc, 'ros_parameters': [1, 2]}, 'ros_parameters'),
        (lambda sc: [sc], 'expected an object'),
        (lambda sc: {**sc, 'emulation': {**sc['emulation'], 'n_ticks': 10**30}}, 'n_ticks'),
        (
            lambda sc: {**sc, 'emulation': {**sc['emulation'], 'first_tick_ns': 'x'}},
            'first_tick_ns',
        ),
        (lambda sc: {k: v for k, v in sc.items() if k != 'emulation'}, 'emulation'),
    ],
)
def test_judge_check_bad_scenario_json_names_file_and_field(
    shared_data, tmp_path, capsys, mutate, words
):
    """
    Refuse a scenario.json of the wrong shape, naming the file and field.

    `vepd judge check` on a scenario.json of the wrong shape: exit 2 naming the file and the
    field, not an AttributeError / TypeError / KeyError traceback.
    """
    import json

    from vepd_ros.cli import main as vepd

    d = _golden_copy(shared_data, tmp_path)
    f = d / 'scenario.json'
    f.write_text(json.dumps(mutate(json.loads(f.read_text()))))
    assert vepd(['judge', 'check', str(d)]) == 2
    err = capsys.readouterr().err
    assert 'scenario.json' in err and words in err and 'Traceback' not in err


def test_judge_check_raw_csv_with_header_only_names_the_file(shared_data, tmp_path, capsys):
    from vepd_ros.cli import main as vepd

    d = _golden_copy(shared_data, tmp_path)
    raw = sorted(d.glob('raw_*.csv'))[0]
    raw.write_text(raw.read_text().splitlines()[0] + '\n')
    assert vepd(['judge', 'check', str(d)]) == 2
    assert raw.name in capsys.readouterr().err


def test_graph_batch_path_counts_a_nan_fix():
    """
    Count a NaN-latitude fix as dropped in the batch judge.

    run_judge_batch (vepd bag, judge replay): a NaN-latitude fix is ignored as upstream and
    counted in `dropped`, so the run is flagged rather than silently short of a fix.
    """
    from vepd_ros.judge.rl_graph import run_judge_batch
    from vepd_ros.testing.judge_inputs import circle_inputs

    imu, gps, _ = circle_inputs(k=1, duration_s=5.0, seed=1)
    gps['latitude'][0, 10] = math.nan
    r = run_judge_batch('config/ekf.yaml', 'config/navsat.yaml', imu, gps)
    assert np.isfinite(r['state']).all()
    assert (
        r['dropped'].get(
            'navsat fix: latitude/longitude/altitude not a number (ignored, as upstream)'
        )
        == 1
    ), r['dropped']

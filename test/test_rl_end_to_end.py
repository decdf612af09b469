# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The built-in judge against robot_localization's real nodes end to end, on a study run (issue 23).

One run as the offline study simulates it (``pipelines.study.simulate_run``: label 'real', GPS
'rtk', IMU 'ch_drift_paper', run 1, seed 4) goes through the judge chain as the sim graph wires
it (config/ekf.yaml + config/navsat.yaml: NavSatFix → navsat_transform → odometry/gps → ekf_node
with the IMU, /odometry/filtered back to navsat), once through the real nodes built by
``make rl`` (``rl_node_replay.replay_chain``: ekf_node on a stepped sim clock, navsat_transform's
inputs and outputs carried by the harness on the built-in graph's schedule) and once through the
built-in judge (``rl_graph.run_judge_batch``, what the study's judge step calls). Compared: every
odometry/gps navsat publishes (stamp, position), every /odometry/filtered (tick, stamp, state,
the published blocks of P), and the run's E and S as the study computes them
(``study.run_records`` + ``metrics.run_metrics``).

Tolerance (derived): the EKF message layer and core agree with the real ekf_node to 1e-9 on the
state and P (test_rl_messages.py, rl_golden); navsat's UTM positions agree to 1e-7 m
(test_rl_navsat.py: pyproj against GeographicLib, 2e-9 m measured). In the chain ART's
configuration differentiates consecutive odometry/gps positions (odom0_differential) over
0.1 s, so a position difference δ becomes a velocity measurement difference 2δ/0.1 s = 20δ:
2e-6 m/s at the navsat bound, which a gain ≤ 1 passes on to the velocity states; positions
integrate it over the run (T ≤ 20 s: 4e-5 m). P depends on the measured values only through
the state in the prediction's Jacobian (ekf.cpp: entries of the form velocity·dt and
sin/cos(angle)·velocity·dt) and through the Mahalanobis gates (0.8 σ on the IMU, which flip only
when d² is within rounding of the threshold): a state difference Δ moves P by about Δ·dt of its
scale per prediction, dt = 1/35 s, so P relative: the core's 1e-9 + 2e-6/35 = 6e-8. E and S are
RMS and spectral-flatness functionals of the velocity: E within the velocity bound, S (a ratio
of means of |FFT|², relative) 1e-6.
The measured figures are printed (``-s``) and stated in docs/judge.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from rl_node_replay import (
    builtin_chain,
    chain_estimate,
    chain_inputs,
    compare_ekf,
    replay_chain,
)
from test_rl_navsat import ATOL_M as ATOL_NAVSAT_M  # the navsat comparison's bound, one place

ATOL_VELOCITY = 2e-6  # m/s (and rad/s, rad for the other non-position states)
ATOL_POSITION = 4e-5  # m
RTOL_P = 1e-9 + ATOL_VELOCITY / 35.0
ATOL_E, ATOL_S = 2e-6, 1e-6
ATOL_SHIFT = 1e-9  # the study's own run against the shifted one (built-in judge both)
SEED = 4


def _study_run(scenario: str, duration_s: float):
    from vepd_ros.pipelines.study import simulate_run

    return simulate_run('real', 'rtk', 'ch_drift_paper', scenario, j=1, duration_s=duration_s,
                        seed=SEED)


def _metrics(run, estimate):
    from vepd_ros.metrics.core import run_metrics
    from vepd_ros.pipelines.study import run_records

    (rec,) = run_records([run], [estimate])
    return run_metrics(*rec.signal('speed'))


def end_to_end(rl_judge, domain_id, ros_ctx, scenario: str, duration_s: float,
               settle_s: float = 0.01) -> dict:
    """Run one study run through both judges; return the deviations (printed by the tests)."""
    from vepd_ros.pipelines.study import judge_batch

    run = _study_run(scenario, duration_s)
    ci = chain_inputs(run.sensors)
    b = builtin_chain(ci)
    # every navsat tick after the first brings a fix (replay_chain's datum-step rule needs it)
    fix_arrivals = np.array([e.arrival_ns for e in ci.events if e.sensor == 'fix'])
    per_tick = np.diff(np.searchsorted(fix_arrivals, ci.nav_ticks, side='right'))
    assert (per_tick >= 1).all(), per_tick
    expected = {int(t) for t in b['tick_ns']}
    exe = {n: str(rl_judge.executable(n)) for n in (
        'ekf_node', 'navsat_transform_node', 'static_transform_publisher')}
    real = replay_chain(ros_ctx, exe, rl_judge.env(domain_id), ci, expected, settle_s=settle_s,
                        quiet_s=max(0.03, settle_s))
    # navsat: every odometry/gps it handed to the EKF
    from rl_node_replay import NAV_OUT_ODOM

    dropped = set(real.datum_step_dropped)
    nav_real = [p for p in real.outputs[NAV_OUT_ODOM] if p.stamp_ns not in dropped]
    nav_pos = np.array([[p.msg.pose.pose.position.x, p.msg.pose.pose.position.y,
                         p.msg.pose.pose.position.z] for p in nav_real]).reshape(-1, 3)
    nb = b['gps_odom_position'][0]
    n_nav = min(len(nav_pos), len(nb))
    nav = {
        'n_real': len(nav_real), 'n_builtin': len(nb),
        'stamps_equal': [p.stamp_ns for p in nav_real][:n_nav]
        == b['gps_odom_stamp_ns'][:n_nav].tolist(),
        'max_abs_m': float(np.max(np.abs(nav_pos[:n_nav] - nb[:n_nav]), initial=0.0)),
        'datum_step_dropped': len(dropped),
    }
    outs = [(int(t), int(s), b['state'][0, i], b['P'][0, i])
            for i, (t, s) in enumerate(zip(b['tick_ns'], b['stamp_ns']))]
    dev = compare_ekf(real, outs)
    # velocities alone (the quantity E is built from)
    ro = real.outputs['odometry/filtered']
    n = min(len(ro), len(outs))
    v_real = np.array([[p.msg.twist.twist.linear.x, p.msg.twist.twist.linear.y]
                       for p in ro[:n]]).reshape(-1, 2)
    dv = float(np.max(np.abs(v_real - b['state'][0, :n, 6:8]), initial=0.0))
    e_real, s_real = _metrics(run, chain_estimate(ci, ro))
    st_b = (b['stamp_ns'] - ci.t0_ns) / 1e9
    e_b, s_b = _metrics(run, (st_b, b['state'][0, :, 6], b['state'][0, :, 7]))
    # the study itself (unshifted times, fixes in base_link), and builtin_chain on its inputs
    (study_est,) = judge_batch([run.sensors])
    e_study, s_study = _metrics(run, study_est)
    b0 = builtin_chain(chain_inputs(run.sensors, t0_ticks=0))
    same_as_study = (np.array_equal((b0['stamp_ns']) / 1e9, study_est[0])
                     and np.array_equal(b0['state'][0, :, 6], study_est[1])
                     and np.array_equal(b0['state'][0, :, 7], study_est[2]))
    return {
        'scenario': scenario, 'duration_s': duration_s, 'ekf': dev, 'max_abs_v': dv,
        'navsat': nav, 'missing': real.missing, 'navsat_steps': len(real.navsat_steps),
        'E': (e_real, e_b, e_study), 'S': (s_real, s_b, s_study),
        'builtin_chain_is_the_study': same_as_study,
        'study_vs_shifted': (len(study_est[0]), len(st_b),
                             float(np.max(np.abs(np.array(study_est[1:])
                                                 - b['state'][0, :, 6:8].T)))
                             if len(study_est[0]) == len(st_b) else None),
        'log': real.log[-2000:], 'navsat_log': real.navsat_log[-2000:],
    }


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize('scenario,duration_s', [('circle', 20.0), ('straight', 10.0)])
def test_a_study_run_through_the_real_judge_chain_equals_the_built_in_judge(
        rl_judge, domain_id, ros_ctx, scenario, duration_s):
    r = end_to_end(rl_judge, domain_id, ros_ctx, scenario, duration_s)
    print('\n' + repr({k: v for k, v in r.items() if 'log' not in k}))
    dev = r['ekf']
    if not (dev.stamps_equal and dev.ticks_equal and dev.ok(ATOL_VELOCITY, ATOL_POSITION, RTOL_P)):
        # The stepped schedule is a wall-clock race the harness can lose under load (CI of
        # 3df3c8d: one output stamped a tick late, the state 4e-4 off after it). A judge
        # difference does not depend on the pace: the same run paced 10x slower decides.
        r = end_to_end(rl_judge, domain_id, ros_ctx, scenario, duration_s, settle_s=0.1)
        print('paced 10x slower: ' + repr({k: v for k, v in r.items() if 'log' not in k}))
    assert not r['missing'], (r['missing'][:5], r['log'], r['navsat_log'])
    nav = r['navsat']
    assert nav['n_real'] == nav['n_builtin'] > 0 and nav['stamps_equal'], (nav, r['navsat_log'])
    assert nav['max_abs_m'] <= ATOL_NAVSAT_M, nav
    assert nav['datum_step_dropped'] == 1, nav  # replay_chain's one artefact, nothing else
    dev = r['ekf']
    assert dev.n_real == dev.n_builtin > 0 and dev.ticks_equal and dev.stamps_equal, dev
    assert dev.ok(ATOL_VELOCITY, ATOL_POSITION, RTOL_P), dev
    e_real, e_b, e_study = r['E']
    s_real, s_b, s_study = r['S']
    assert abs(e_real - e_b) <= ATOL_E and abs(s_real - s_b) <= ATOL_S, r
    # builtin_chain is the study's judge step; the shift to t0 ≈ 1000 s (differential dt in
    # double seconds: ~1e-13 s resolution there) and the fix frame base_link leave its figures
    assert r['builtin_chain_is_the_study'], r
    n_study, n_shifted, dv_shift = r['study_vs_shifted']
    assert n_study == n_shifted and dv_shift <= ATOL_SHIFT, r
    assert abs(e_b - e_study) <= ATOL_SHIFT and abs(s_b - s_study) <= ATOL_SHIFT, r


def _imu_without_orientation_case():
    """
    Return ``synthetic_case('frames')`` with two_d_mode and IMUs that carry no orientation.

    Orientation covariance[0] = −1 on every IMU message (what the study's and the sim graph's IMU
    models publish): ekf_node removes gravity with its own state's orientation (the IMU mounted
    upside down and sideways) and then applies two_d_mode's forceTwoD (az = 0, ros_filter.cpp
    prepareAcceleration); the wheel odometry's lever-arm term t×ω_state comes before it too
    (prepareTwist). No lever arm on the IMU: its t×α term is not emulated (docs/judge.md,
    difference 10).
    """
    from rl_node_replay import synthetic_case

    params, events, tf_static = synthetic_case('frames')
    params['two_d_mode'] = True
    for e in events:
        if e.sensor == 'imu0':
            cov = list(e.msg.orientation_covariance)
            cov[0] = -1.0
            e.msg.orientation_covariance = cov
    return params, events, tf_static


@pytest.mark.ros
@pytest.mark.slow
def test_two_d_mode_after_the_state_dependent_terms_as_the_real_ekf_node(
        rl_judge, domain_id, ros_ctx):
    """The built-in judge's IMU without orientation in two_d_mode against the real ekf_node."""
    from rl_node_replay import builtin_ekf, ekf_ticks, replay_ekf
    from vepd_ros.judge.config import load_ekf_params
    from vepd_ros.judge.transforms import StaticTransforms

    params, events, tf_static = _imu_without_orientation_case()
    tf = StaticTransforms()
    for parent, child, t, q in tf_static:
        tf.add(parent, child, t, quaternion=q)
    ticks = ekf_ticks(load_ekf_params(params).period_ns, events)
    outs, f = builtin_ekf(params, events, ticks, tf)
    real = replay_ekf(ros_ctx, str(rl_judge.executable('ekf_node')), rl_judge.env(domain_id),
                      params, events, ticks, {t: st for t, st, _, _ in outs}, tf_static,
                      str(rl_judge.executable('static_transform_publisher')))
    dev = compare_ekf(real, outs)
    print(f'\n{dev}  dropped={f.dropped}')
    assert not real.missing, real.log[-3000:]
    # the message layer's tolerance (test_rl_messages.py)
    assert dev.ok(1e-9, 1e-8, 1e-9), dev


def test_state_dependent_terms_keep_two_d_mode_zeros():
    """
    Check the prepared IMU measurement itself: az = 0 after gravity removal with the state's pose.

    Until issue 23's end-to-end comparison the built-in judge zeroed two_d_mode's entries before
    the state-dependent terms were added at delivery: an IMU without orientation measured
    az = −g (and a lever arm's terms leaked into vz), which put the study's filter at
    az = −g/2 and pulled vz off 0; the real ekf_node keeps them 0 (the test above, and
    test_a_study_run_through_the_real_judge_chain_equals_the_built_in_judge).
    """
    from vepd_ros.judge.config import load_ekf_params
    from vepd_ros.judge.measurements import MeasurementBuilder, TWO_D_INDICES
    from vepd_ros.judge.transforms import StaticTransforms

    params, events, tf_static = _imu_without_orientation_case()
    p = load_ekf_params(params)
    tf = StaticTransforms()
    for parent, child, t, q in tf_static:
        tf.add(parent, child, t, quaternion=q)
    (imu,) = [s for s in p.sensors if s.kind == 'imu']
    m = next(e.msg for e in events if e.sensor == 'imu0')
    b = MeasurementBuilder(p, tf)
    series = b.imu_arrays(
        imu, np.array([10**9]), np.array([[0.0, 0.0, 0.0, 1.0]]),
        np.array([[0.01, -0.02, 0.3]]), np.array([[0.2, 0.1, 9.7]]),
        np.array([m.orientation_covariance]), np.array([m.angular_velocity_covariance]),
        np.array([m.linear_acceleration_covariance]), frame_id=m.header.frame_id)
    x = np.zeros((1, 15))
    x[0, 3:6] = 0.02, -0.01, 0.4  # the state's orientation removes gravity
    (acc,) = [s for s in series if s.state_terms is not None]
    assert acc.topic == 'imu0_acceleration'
    z, _ = acc.at(0, x)
    assert (np.asarray(z)[..., list(TWO_D_INDICES)] == 0.0).all(), z
    assert np.asarray(z)[..., 12:14].any(), z  # ax, ay measured

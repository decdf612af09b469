# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the navsat_transform core against GeographicLib and robot_localization's rules.

navsat_transform core (vepd_ros.judge.navsat) against GeographicLib values and the rules of
robot_localization's navsat_transform_node (shared/reference/robot_localization.md §7).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
import warnings

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
from test_models_gps import PROPS
from test_yamlio_loader import _write
from vepd_ros.frames import quaternion_from_rpy
from vepd_ros.judge.navsat import (
    load_navsat_params,
    navsat_params,
    NavSatCore,
    StaticTF,
    utm_convergence_deg,
    utm_forward,
    utm_reverse,
    utm_standard_zone,
)
from vepd_ros.params import ParameterError

REPO = Path(__file__).resolve().parents[1]
LAT0, LON0, ALT0 = 43.0731, -89.4012, 260.0  # near the ART lot (zone 16)


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


# -- projection ------------------------------------------------------------------------------


def test_utm_matches_geographiclib(shared_data):
    """
    Pyproj reproduces GeographicLib UTMUPS::Forward.

    Pyproj reproduces GeographicLib UTMUPS::Forward on 1003 points (test1.bag fixes, zone edges,
    Norway/Svalbard exceptions, southern hemisphere): zone, hemisphere, ≤ 2e-9 m, convergence.
    """
    with open(
        shared_data / 'rl_golden' / 'navsat_utm' / 'utm_geographiclib.csv', newline=''
    ) as fh:
        rows = list(csv.DictReader(fh))
    lat = np.array([float(r['latitude_deg']) for r in rows])
    lon = np.array([float(r['longitude_deg']) for r in rows])
    x, y, zone, northp = utm_forward(lat, lon)
    np.testing.assert_array_equal(zone, [int(r['zone']) for r in rows])
    np.testing.assert_array_equal(northp, [r['northp'] == '1' for r in rows])
    assert np.abs(x - [float(r['easting_m']) for r in rows]).max() <= 2e-9
    assert np.abs(y - [float(r['northing_m']) for r in rows]).max() <= 2e-9
    extra = [i for i, r in enumerate(rows) if r['source'] == 'extra'] + [0, 500, 988]
    gam = [utm_convergence_deg(lat[i], lon[i]) for i in extra]
    np.testing.assert_allclose(
        gam, [float(rows[i]['meridian_convergence_deg']) for i in extra], atol=1e-9, rtol=0
    )


@pytest.mark.parametrize(
    'lat, lon, north, east, zone, conv',
    [
        (
            51.423964,
            5.494271,
            5699924.709,
            673409.989,
            31,
            1.950,
        ),  # upstream test_navsat_conversions.cpp
        (-43.530955, 172.636645, 5178919.718, 632246.802, 59, -1.127),
    ],
)
def test_upstream_conversion_points(lat, lon, north, east, zone, conv):
    x, y, z, northp = utm_forward(lat, lon)
    assert int(z) == zone and bool(northp) == (lat >= 0)
    assert abs(float(x) - east) < 1e-2 and abs(float(y) - north) < 1e-2
    assert abs(utm_convergence_deg(lat, lon) - conv) < 1e-2
    lat2, lon2 = utm_reverse(zone, lat >= 0, x, y)
    assert abs(float(lat2) - lat) < 1e-5 and abs(float(lon2) - lon) < 1e-5


def test_standard_zone_exceptions():
    assert utm_standard_zone(60.0, 4.0) == 32  # Norway: 32V starts at 3E
    assert utm_standard_zone(60.0, 2.9) == 31
    assert utm_standard_zone(75.0, 8.0) == 31  # Svalbard 31X up to 9E
    assert utm_standard_zone(75.0, 10.0) == 33
    assert utm_standard_zone(84.5, 0.0) == 0 and utm_standard_zone(-80.5, 0.0) == 0  # UPS
    assert utm_standard_zone(10.0, 180.0) == 1  # 180 normalises to -180


# -- the node's state machine ------------------------------------------------------------------


def _ll_offset(de, dn, lat=LAT0, lon=LON0):
    """
    Return the latitude/longitude of a point offset in UTM grid metres from (lat, lon).

    Latitude/longitude of a point de m east (grid) and dn m north (grid) of (lat, lon) in UTM.
    """
    x, y, z, n = utm_forward(lat, lon)
    la, lo = utm_reverse(int(z), bool(n), float(x) + de, float(y) + dn)
    return float(la), float(lo)


def _started(
    params=None,
    imu_yaw=0.0,
    odom_pos=(0.0, 0.0, 0.0),
    odom_yaw=0.0,
    tf=None,
    imu_frame='base_link',
    fix_cov=None,
    gps_frame='gps',
):
    """Start a navsat core with its transform computed: odometry, IMU, a fix, then one tick."""
    nav = NavSatCore(params, tf=tf)
    nav.on_odom(1_000, odom_pos, quaternion_from_rpy(0.0, 0.0, odom_yaw))
    nav.on_imu(2_000, quaternion_from_rpy(0.0, 0.0, imu_yaw), frame_id=imu_frame)
    nav.on_fix(3_000, LAT0, LON0, ALT0, cov=fix_cov, frame_id=gps_frame)
    assert nav.tick() == (None, None)  # transform computed in this tick, nothing published
    assert nav.good.all()
    return nav


def test_datum_transform_with_imu_yaw_declination_offset_and_convergence():
    p = {'magnetic_declination_radians': 0.05, 'yaw_offset': -0.2}
    imu_yaw, odom_yaw, odom_pos = 0.7, 0.3, np.array([1.0, -2.0, 0.5])
    nav = _started(p, imu_yaw=imu_yaw, odom_pos=odom_pos, odom_yaw=odom_yaw)
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    psi = imu_yaw + 0.05 - 0.2 + gamma
    assert nav.heading[0] == pytest.approx(psi, abs=1e-12)
    lat, lon = _ll_offset(30.0, -12.0)
    nav.on_fix(5_000, lat, lon, ALT0 + 1.5)
    nav.on_odom(6_000, odom_pos, quaternion_from_rpy(0, 0, odom_yaw))
    odom, filt = nav.tick()
    expected = odom_pos + _rz(odom_yaw) @ _rz(psi).T @ np.array([30.0, -12.0, 1.5])
    np.testing.assert_allclose(odom['position'][0], expected, atol=1e-6)
    assert odom['stamp_ns'][0] == 5_000 and odom['valid'][0]
    np.testing.assert_array_equal(odom['quaternion'][0], [0, 0, 0, 1])
    assert odom['frame_id'] == 'odom' and odom['child_frame_id'] == ''
    assert filt is not None and filt['stamp_ns'][0] == 6_000


def test_latest_messages_form_the_datum_and_imu_before_odometry_is_ignored():
    nav = NavSatCore()
    nav.on_imu(1, quaternion_from_rpy(0, 0, 1.0), frame_id='base_link')  # before odometry: ignored
    nav.on_fix(2, *_ll_offset(100.0, 0.0), ALT0)
    nav.tick()
    assert not nav.good[0] and not nav.has_imu[0]
    nav.on_odom(3, (0, 0, 0), (0, 0, 0, 1))
    nav.on_imu(4, quaternion_from_rpy(0, 0, 0.4), frame_id='base_link')
    nav.on_imu(5, quaternion_from_rpy(0, 0, 0.5), frame_id='base_link')  # the latest wins
    nav.on_fix(6, LAT0, LON0, ALT0)  # the latest fix is the datum
    nav.tick()
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    assert nav.heading[0] == pytest.approx(0.5 + gamma, abs=1e-12)
    np.testing.assert_allclose(nav.from_ll(LAT0, LON0, ALT0)[0], [0, 0, 0], atol=1e-6)
    nav.on_imu(
        7, quaternion_from_rpy(0, 0, 2.0), frame_id='base_link'
    )  # after the transform: unused
    assert nav.heading[0] == pytest.approx(0.5 + gamma, abs=1e-12)


def test_imu_needs_a_transform_to_base_link_and_mount_is_corrected():
    nav = NavSatCore()
    nav.on_odom(1, (0, 0, 0), (0, 0, 0, 1))
    nav.on_imu(
        2, quaternion_from_rpy(0, 0, 0.5), frame_id='imu_link'
    )  # no TF: upstream cannot use it
    nav.on_fix(3, LAT0, LON0, ALT0)
    nav.tick()
    assert not nav.good[0]
    tf = StaticTF.parse(['base_link imu_link 0 0 0 0 0 0.25'])
    nav = _started(tf=tf, imu_yaw=0.5, imu_frame='imu_link')
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    assert nav.heading[0] == pytest.approx(0.5 - 0.25 + gamma, abs=1e-12)


def test_use_odometry_yaw_takes_heading_from_odometry_and_ignores_imu():
    p = {'use_odometry_yaw': True}
    nav = NavSatCore(p)
    nav.on_imu(1, quaternion_from_rpy(0, 0, 1.2), frame_id='base_link')
    nav.on_odom(2, (5.0, 0.0, 0.0), quaternion_from_rpy(0, 0, 0.3))
    nav.on_fix(3, LAT0, LON0, ALT0)
    nav.tick()
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    assert nav.heading[0] == pytest.approx(0.3 + gamma, abs=1e-12)
    # world = p_odom + Rz(0.3) Rz(0.3 + γ)^T d = p_odom + Rz(-γ) d: grid offsets become true ENU
    lat, lon = _ll_offset(10.0, 0.0)
    nav.on_fix(4, lat, lon, ALT0)
    nav.on_odom(5, (5.0, 0.0, 0.0), quaternion_from_rpy(0, 0, 0.3))
    odom, _ = nav.tick()
    np.testing.assert_allclose(
        odom['position'][0], [5.0, 0, 0] + _rz(-gamma) @ [10.0, 0, 0], atol=1e-6
    )


def test_zero_altitude():
    for zero, z_expected in ((False, 3.0), (True, 0.0)):
        nav = _started({'zero_altitude': zero})
        nav.on_fix(10, LAT0, LON0, ALT0 + 3.0)
        nav.on_odom(11, (0, 0, 0), (0, 0, 0, 1))
        odom, _ = nav.tick()
        assert odom['position'][0, 2] == pytest.approx(z_expected, abs=1e-9)


def test_all_zero_covariance_passes_through_and_a_real_one_is_rotated():
    nav = _started(imu_yaw=0.4)
    nav.on_fix(10, LAT0, LON0, ALT0, cov=np.zeros(9))
    nav.on_odom(11, (0, 0, 0), (0, 0, 0, 1))
    odom, _ = nav.tick()
    assert not np.any(odom['pose_covariance'])  # Chrono GPS: no floor, no inflation
    C = np.diag([4.0, 1.0, 9.0])
    nav.on_fix(12, LAT0, LON0, ALT0, cov=C.ravel())
    nav.on_odom(13, (0, 0, 0), (0, 0, 0, 1))
    odom, _ = nav.tick()
    cov = odom['pose_covariance'][0].reshape(6, 6)
    R = nav.R_cw[0]
    np.testing.assert_allclose(cov[:3, :3], R @ C @ R.T, atol=1e-12)
    assert not np.any(cov[3:, :]) and not np.any(cov[:, 3:])


def test_fix_with_no_fix_status_or_nan_is_dropped():
    nav = NavSatCore()
    assert not nav.on_fix(1, LAT0, LON0, ALT0, status=-1)[0]
    assert not nav.on_fix(2, float('nan'), LON0, ALT0)[0]
    assert not nav.on_fix(3, LAT0, LON0, float('nan'))[0]
    assert not nav.has_gps[0] and not nav.gps_updated[0]
    nav = _started()
    nav.on_odom(5, (0, 0, 0), (0, 0, 0, 1))
    assert nav.tick()[0] is not None  # the datum fix goes out first
    nav.on_fix(10, LAT0, float('nan'), ALT0)
    nav.on_odom(11, (0, 0, 0), (0, 0, 0, 1))
    odom, filt = nav.tick()
    assert odom is None and filt is not None  # no new good fix → no odometry/gps


def test_publication_needs_new_fix_and_new_odometry():
    # the transform tick consumes neither flag: the datum fix goes out at the next tick
    nav = _started()
    odom, filt = nav.tick()
    assert odom is not None and odom['stamp_ns'][0] == 3_000 and filt is not None
    assert nav.tick() == (None, None)
    nav.on_fix(20, LAT0, LON0, ALT0)
    assert nav.tick() == (None, None)  # fix but no new odometry (gps/filtered consumed it)
    nav.on_odom(21, (0, 0, 0), (0, 0, 0, 1))
    odom, filt = nav.tick()
    assert odom is not None and filt is not None
    # without gps/filtered the odometry flag is never consumed: every new fix goes out
    nav = _started({'publish_filtered_gps': False})
    nav.on_odom(10, (0, 0, 0), (0, 0, 0, 1))
    assert nav.tick()[0] is not None
    nav.on_fix(20, LAT0, LON0, ALT0)
    odom, filt = nav.tick()
    assert odom is not None and filt is None


def test_filtered_gps_inverts_the_transform():
    nav = _started(imu_yaw=1.1, odom_pos=(3.0, 4.0, 0.0), odom_yaw=-0.4)
    lat, lon = _ll_offset(-40.0, 25.0)
    p = nav.from_ll(lat, lon, ALT0 + 2.0)[0]
    cov = np.zeros(36)
    cov[0], cov[7], cov[1], cov[6] = 2.0, 3.0, 0.5, 0.5
    nav.on_odom(50, p, quaternion_from_rpy(0, 0, 0.9), pose_cov=cov)
    _, filt = nav.tick()
    assert filt['latitude'][0] == pytest.approx(lat, abs=1e-9)
    assert filt['longitude'][0] == pytest.approx(lon, abs=1e-9)
    assert filt['altitude'][0] == pytest.approx(ALT0 + 2.0, abs=1e-6)
    assert (
        filt['stamp_ns'][0] == 50 and filt['status'] == 2 and filt['position_covariance_type'] == 3
    )
    assert filt['frame_id'] == 'base_link'
    Rinv = nav.R_cw[0].T
    np.testing.assert_allclose(
        filt['position_covariance'][0].reshape(3, 3),
        Rinv @ cov.reshape(6, 6)[:3, :3] @ Rinv.T,
        atol=1e-12,
    )


def test_gps_lever_arm():
    tf = StaticTF.parse(['base_link gps 0.5 0.2 0 0 0 0'])
    nav = _started(tf=tf, imu_yaw=0.0)
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    # the datum fix is the antenna; the robot origin is 0.5 m behind / 0.2 m right of it →
    # odometry/gps of the same fix, with the robot heading 0, is the origin again
    nav.on_odom(10, (0, 0, 0), (0, 0, 0, 1))
    odom, _ = nav.tick()
    np.testing.assert_allclose(odom['position'][0, :2], [0, 0], atol=1e-6)
    assert gamma != 0.0


def test_manual_datum():
    p = {'wait_for_datum': True, 'datum': [LAT0, LON0, 0.25]}
    nav = NavSatCore(p)
    nav.on_fix(1, *_ll_offset(10.0, 0.0), ALT0)
    nav.tick()
    assert not nav.good[0]  # waits for odometry
    nav.on_odom(2, (7.0, 7.0, 0.0), quaternion_from_rpy(0, 0, 1.0))  # ignored for the datum pose
    nav.tick()
    gamma = math.radians(utm_convergence_deg(LAT0, LON0))
    assert nav.good[0] and nav.heading[0] == pytest.approx(0.25 + gamma, abs=1e-12)
    np.testing.assert_allclose(nav.from_ll(LAT0, LON0, 0.0)[0], [0, 0, 0], atol=1e-6)


def test_batch_equals_single_runs():
    rng = np.random.default_rng(3)
    K = 4
    yaws = rng.uniform(-3, 3, K)
    offs = rng.normal(0, 20, (K, 6, 2))
    batch = NavSatCore({'zero_altitude': True}, k=K)
    singles = [NavSatCore({'zero_altitude': True}) for _ in range(K)]
    outs_b, outs_s = [], [[] for _ in range(K)]
    for step in range(6):
        lat, lon = np.array([_ll_offset(*offs[i, step]) for i in range(K)]).T
        pos = np.column_stack([offs[:, step], np.zeros(K)])
        q = quaternion_from_rpy(np.zeros(K), np.zeros(K), yaws + 0.1 * step)
        cov = np.tile(np.diag([1.0, 2.0, 3.0]).ravel(), (K, 1))
        batch.on_odom(step * 10, pos, q)
        batch.on_imu(step * 10 + 1, q, frame_id='base_link')
        batch.on_fix(step * 10 + 2, lat, lon, ALT0, cov=cov)
        outs_b.append(batch.tick())
        for i, s in enumerate(singles):
            s.on_odom(step * 10, pos[i], q[i])
            s.on_imu(step * 10 + 1, q[i], frame_id='base_link')
            s.on_fix(step * 10 + 2, lat[i], lon[i], ALT0, cov=cov[i])
            outs_s[i].append(s.tick())
    for step, (ob, fb) in enumerate(outs_b):
        for i in range(K):
            os_, fs = outs_s[i][step]
            assert (ob is None) == (os_ is None)
            if ob is not None:
                np.testing.assert_allclose(ob['position'][i], os_['position'][0], atol=1e-9)
                np.testing.assert_allclose(
                    ob['pose_covariance'][i], os_['pose_covariance'][0], atol=1e-12
                )
                np.testing.assert_allclose(fb['latitude'][i], fs['latitude'][0], atol=1e-12)


def test_params_from_the_shipped_yaml_and_errors():
    p = load_navsat_params(REPO / 'config' / 'navsat.yaml')
    assert (
        p['use_odometry_yaw']
        and p['zero_altitude']
        and p['publish_filtered_gps']
        and p['frequency'] == 10.0
    )
    assert navsat_params()['publish_filtered_gps'] is True  # code default, not the sample yaml's
    with pytest.raises(ParameterError, match='zero_altitud'):
        navsat_params({'zero_altitud': True})
    with pytest.raises(ParameterError, match='use_local_cartesian'):
        navsat_params({'use_local_cartesian': True})
    with pytest.raises(ParameterError, match='frequency'):
        navsat_params({'frequency': 0.0})
    with pytest.raises(ParameterError, match='yaw_offset'):
        navsat_params({'yaw_offset': 'x'})


def test_timer_ticks():
    nav = NavSatCore({'frequency': 30.0, 'delay': 0.5})
    t = nav.timer_ticks(0, 1_000_000_000)
    assert t[0] == 500_000_000 + 33_333_333 and np.all(np.diff(t) == 33_333_333)


@pytest.mark.parametrize('lever', [False, True])
@pytest.mark.parametrize('use_odometry_yaw', [False, True])
def test_deferred_odometry_and_unbuilt_filtered_gps_equal_the_eager_node(use_odometry_yaw, lever):
    """
    Deferred odometry and unbuilt gps/filtered publish exactly what the eager node does.

    on_odom_deferred (the graph's K = 1 feedback: the message is built only if navsat reads it) and
    tick(filtered=False) publish exactly what on_odom / tick() publish: odometry/gps bit for bit,
    and gps/filtered when it is built; the "new odometry" flag is consumed either way. A gps frame
    with a lever arm makes odometry/gps read the deferred orientation.
    """
    tf = StaticTF().add('base_link', 'gps', (0.3, -0.1, 0.5)) if lever else None
    params = {'zero_altitude': False, 'use_odometry_yaw': use_odometry_yaw}
    rng = np.random.default_rng(8)
    eager, lazy = NavSatCore(params, tf=tf), NavSatCore(params, tf=tf)
    built = []
    for step in range(12):
        pos = rng.normal(0, 5, 3)
        q = quaternion_from_rpy(0.0, 0.0, 0.3 + 0.05 * step)
        cov = np.abs(rng.normal(0, 1, 36))
        lat, lon = _ll_offset(*rng.normal(0, 20, 2))
        for nav in (eager, lazy):
            if not use_odometry_yaw:
                nav.on_imu(step * 10 + 1, q, frame_id='base_link')
            nav.on_fix(
                step * 10 + 2, lat, lon, ALT0, cov=np.diag([1.0, 2.0, 3.0]).ravel(), frame_id='gps'
            )
        if step % 3 != 2:  # some ticks without new odometry
            eager.on_odom(step * 10, pos, q, cov)

            def source(pos=pos, q=q, cov=cov):
                built.append(True)
                return pos, q, cov

            lazy.on_odom_deferred(step * 10, source)
        oe, fe = eager.tick()
        ol, fl = lazy.tick(filtered=step % 2 == 0)
        assert (oe is None) == (ol is None)
        if oe is not None:
            for key in ('valid', 'stamp_ns', 'position', 'quaternion', 'pose_covariance'):
                assert np.asarray(oe[key]).tobytes() == np.asarray(ol[key]).tobytes(), key
        if step % 2 == 0:
            assert (fe is None) == (fl is None)
            if fe is not None:
                for key in (
                    'latitude',
                    'longitude',
                    'altitude',
                    'position_covariance',
                    'stamp_ns',
                ):
                    assert np.asarray(fe[key]).tobytes() == np.asarray(fl[key]).tobytes(), key
        else:
            assert fl is None
        assert (eager.odom_updated == lazy.odom_updated).all()
    assert eager.good.all() and lazy.good.all()
    assert 0 < len(built) <= 8 and (
        lever or len(built) < 8
    )  # built only when read (odometry/gps reads the
    #                                                            orientation for the lever arm)
    np.testing.assert_array_equal(eager.odom_pos, lazy.odom_pos)


@pytest.mark.parametrize(
    'datum', ['[.nan, 0.0, 0.0]', '[200.0, 0.0, 0.0]', '[0.0, 400.0, 0.0]', '[0.0, .inf, 0.0]']
)
def test_bad_navsat_datum(tmp_path, datum):
    text = f'navsat_transform:\n  ros__parameters:\n    wait_for_datum: true\n    datum: {datum}\n'
    with pytest.raises(ParameterError, match='datum'):
        load_navsat_params(_write(tmp_path, text))


def test_static_tf_parse_refuses_nan_and_zero_quaternion():
    from vepd_ros.judge.navsat import StaticTF

    for spec in ('a b 0 0 0 nan 0 0', 'a b 0 0 0 0 0 0 0', 'a b inf 0 0 0 0 0'):
        with pytest.raises(ValueError, match='--static-tf'):
            StaticTF.parse([spec])
    assert StaticTF.parse(['a b 0 0 0 0 0 0 1']) is not None


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


# any float a message could carry, weighted toward the troublesome ones
WILD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [0.0, -0.0, 1e-200, 1e-320, 1e300, -1e300, math.nan, math.inf, -math.inf, 1.0]
    ),
    st.floats(-10.0, 10.0),
)
VAR = st.one_of(st.floats(1e-6, 10.0), WILD)


@PROPS
@given(st.lists(st.tuples(WILD, WILD, WILD, VAR), min_size=1, max_size=10))
def test_navsat_fixes_never_raise_and_bad_ones_are_counted(fixes):
    nav = NavSatCore({}, k=1)
    n_bad = 0
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for j, (lat, lon, alt, var) in enumerate(fixes):
            # a NaN position is ignored as upstream does, and counted like any other bad fix
            nan_pos = math.isnan(lat) or math.isnan(lon) or math.isnan(alt)
            # dropped where robot_localization fails (latitude beyond ±90° throws, an infinite
            # longitude has no zone, a non-finite covariance makes the EKF's state NaN)
            bad = nan_pos or not (abs(lat) <= 90 and abs(lon) < math.inf and abs(var) < math.inf)
            n_bad += bad
            nav.on_fix(10**9 * (j + 1), lat, lon, alt, cov=[var, 0, 0, 0, var, 0, 0, 0, var])
    assert sum(nav.dropped.values()) == n_bad
    assert np.isfinite(nav.fix_utm[:, :2]).all() and np.isfinite(nav.fix_cov).all()

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Fixture generator for attack.py; run with the repo's .venv python: genfix.py REPO FIXDIR."""

import json
from pathlib import Path
import shutil
import sys

import numpy as np
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag
from vepd_ros.pipelines import study as pipeline
import yaml

repo, fix = Path(sys.argv[1]), Path(sys.argv[2])
fix.mkdir(parents=True, exist_ok=True)
for name in ('ekf', 'navsat'):
    d = yaml.safe_load((repo / 'config' / f'{name}.yaml').read_text())
    (fix / f'{name}.json').write_text(json.dumps(d))

sim = pipeline.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', j=1, duration_s=8.0,
                            seed=3)
topics = {'imu': '/imu/data'}


def bag(name, mut=None, truth=('odom', 'gps_vel'), tp=topics):
    s = streams_from_sensor_run(sim.sensors, truth=truth)
    if mut:
        mut(s)
    p = fix / 'bags' / name
    p.parent.mkdir(exist_ok=True)
    if p.exists():
        shutil.rmtree(p)
    write_bag(p, s, storage='sqlite3', topics=tp)


def q0(s):
    s['imu']['orientation'] = np.array(s['imu']['orientation'], float)
    s['imu']['orientation'][40] = [1e-200, 0, 0, 0]


def qzero(s):
    s['imu']['orientation'] = np.array(s['imu']['orientation'], float)
    s['imu']['orientation'][40] = [0, 0, 0, 0]


def covnan(s):
    c = np.array(s['fix']['position_covariance'], float)
    c[5, 0] = np.nan
    s['fix']['position_covariance'] = c


def covinf(s):
    c = np.array(s['fix']['position_covariance'], float)
    c[5, 0] = np.inf
    s['fix']['position_covariance'] = c


def latnan(s):
    a = np.array(s['fix']['latitude'], float)
    a[5] = np.nan
    s['fix']['latitude'] = a


def lat200(s):
    a = np.array(s['fix']['latitude'], float)
    a[5] = 200.0
    s['fix']['latitude'] = a


def truthnan(s):
    for k in ('odom',):
        a = np.array(s[k]['linear'], float)
        a[30, 0] = np.nan
        s[k]['linear'] = a
    a = np.array(s['gps_vel']['v_enu'], float)
    a[30, 0] = np.nan
    s['gps_vel']['v_enu'] = a


def truth1e300(s):
    a = np.array(s['odom']['linear'], float)
    a[30, 0] = 1e300
    s['odom']['linear'] = a
    a = np.array(s['gps_vel']['v_enu'], float)
    a[30, 0] = 1e300
    s['gps_vel']['v_enu'] = a


def imu_early(s):
    t = np.array(s['imu']['t_ns'], np.int64)
    t[200] -= 5_000_000_000
    s['imu']['t_ns'] = t


def gyronan(s):
    a = np.array(s['imu']['angular_velocity'], float)
    a[100, 2] = np.nan
    s['imu']['angular_velocity'] = a


def accelinf(s):
    a = np.array(s['imu']['linear_acceleration'], float)
    a[100, 0] = np.inf
    s['imu']['linear_acceleration'] = a


def imucovnan(s):
    a = np.array(s['imu']['angular_velocity_covariance'], float)
    a[100, 0] = np.nan
    s['imu']['angular_velocity_covariance'] = a


def dupstamp(s):
    t = np.array(s['fix']['t_ns'], np.int64)
    t[10] = t[9]
    s['fix']['t_ns'] = t


def hugestamp(s):
    t = np.array(s['fix']['t_ns'], np.int64)
    t[-1] = t[-1] + 10**9 * 10**9
    s['fix']['t_ns'] = t
    s['fix']['arrival_ns'] = np.array(s['fix']['arrival_ns'], np.int64)
    s['fix']['arrival_ns'][-1] = t[-1]


bag('good')
bag('good_art', tp={})
for f in (
    q0,
    qzero,
    covnan,
    covinf,
    latnan,
    lat200,
    truthnan,
    truth1e300,
    imu_early,
    gyronan,
    accelinf,
    imucovnan,
    dupstamp,
    hugestamp,
):
    bag(f.__name__, f)
# fixes in a frame nothing places on base_link (robot_localization would put odometry/gps at the
# origin), and in the ART driver's 'gps' (the ART profile's transform places it)
bag('fixframe_antenna', lambda s: s['fix'].update(frame_id='antenna'))
bag('fixframe_gps', lambda s: s['fix'].update(frame_id='gps'))
bag('no_imu', lambda s: s.pop('imu'))
bag('no_fix', lambda s: s.pop('fix'))
bag('no_truth', truth=())
# truncated bag
bag('truncated')
db = next((fix / 'bags' / 'truncated').glob('*.db3'))
db.write_bytes(db.read_bytes()[: db.stat().st_size // 3])
print('fixtures ok')

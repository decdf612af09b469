# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The held-out rl_golden scenario (test/data): two_d_mode with latency and outliers.

Made by tools/rl_golden from upstream's own ekf.cpp (README beside the data). The judge must
reproduce it within the project's tolerances (state 1e-9, positions 1e-8, P relative 1e-9): the
input guards may not change what the judge does with input robot_localization accepts (issue 23).
"""

from __future__ import annotations

import gzip
from pathlib import Path
import shutil
import subprocess
import sys

import numpy as np
import pytest
from vepd_ros.judge.golden import read_csv, run_scenario
from vepd_ros.judge.kernel import REFUSED_OVERFLOW

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / 'test' / 'data' / 'rl_golden_s3_two_d_latency_outliers'
TOOLS = REPO / 'tools' / 'rl_golden'


def test_vepd_judge_check_matches_upstream(capsys):
    from vepd_ros.cli import main as vepd

    assert vepd(['judge', 'check', str(DATA)]) == 0
    out = capsys.readouterr().out
    assert 'rows match, stamps match' in out and 'OK' in out
    worst = float(out.rsplit('max_abs_dev', 1)[1].split()[0])
    assert worst < 1e-9


def test_full_covariance_matches():
    """Every P entry at the kept ticks, relative to sqrt(P_ii P_jj) (off-diagonals can be ~0)."""
    rep = run_scenario(DATA, full_covariance=True)
    assert rep.ok
    g = read_csv(DATA / 'golden_full_covariance.csv.gz')
    rows = np.searchsorted(rep.result.tick_ns, g['tick_ns'])
    assert np.all(rep.result.tick_ns[rows] == g['tick_ns'])
    gold = np.stack([g[f'P_{i}_{j}'] for i in range(15) for j in range(15)], -1)
    gold = gold.reshape(-1, 15, 15)
    d = np.sqrt(np.abs(np.diagonal(gold, axis1=1, axis2=2)))
    scale = d[:, :, None] * d[:, None, :]
    mine = rep.result.P[0][rows]
    assert np.max(np.abs(mine - gold) / np.where(scale > 0, scale, 1.0)) < 1e-9


def test_outliers_are_what_upstream_does_with_them():
    """
    Keep upstream's decision on each outlier of the scenario.

    Finite huge values and covariances (odom0 samples 20, 95: vx 3e9; 50, 100: variance 1e32;
    70: vy 1e200) all reach the core, as upstream's ros_filter passes them on; vy 1e200 without a
    threshold is then rejected by the overflow rule, and counted.
    """
    from vepd_ros.judge import engine
    from vepd_ros.judge.filter import make_ekf, ticks_for
    from vepd_ros.judge.golden import build_series, scenario_params
    from vepd_ros.fileio import load_json

    scenario = load_json(DATA / 'scenario.json', what='golden scenario')
    params = scenario_params(scenario)
    series = build_series(params, DATA)
    raw = read_csv(DATA / 'raw_odom0.csv.gz')
    twist = next(s for s in series if s.topic == 'odom0_twist')
    for k in (20, 50, 70, 95, 100):
        assert raw['stamp_ns'][raw['seq'] == k][0] in twist.stamps, k
    em = scenario['emulation']
    ticks = ticks_for(params, em['first_tick_ns'], em['n_ticks'])
    ekf = make_ekf(params, 1)
    engine.run(ekf, series, ticks, engine.NodeOutputs(params, ticks.size, 1, False))
    assert ekf.drops == {'update refused: ' + REFUSED_OVERFLOW: 1}


def _build_driver() -> Path:
    if shutil.which('g++') is None:
        pytest.skip('no g++: the rl_golden driver cannot be built here')
    proc = subprocess.run(
        ['bash', str(TOOLS / 'build.sh')], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True
    )
    if proc.returncode == 77:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_checked_in_data_is_what_upstream_computes(tmp_path):
    """
    Regenerate the scenario and re-run upstream's core: the checked-in files, byte for byte.

    Builds tools/rl_golden's driver (cached under ~/.cache/vepd_ros; skipped with the reason
    without ../shared, g++ or Eigen).
    """
    _build_driver()
    out = tmp_path / 's3'
    for cmd in (['make_scenario.py', str(out)], ['rl_golden.py', 'run', str(out)]):
        proc = subprocess.run([sys.executable, str(TOOLS / cmd[0]), *cmd[1:]],
                              stderr=subprocess.PIPE, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ('scenario.json', 'golden_ticks.csv'):
        assert (out / name).read_bytes() == (DATA / name).read_bytes(), name
    for name in ('raw_imu0.csv', 'raw_odom0.csv', 'raw_odom1.csv', 'measurements.csv'):
        assert gzip.decompress((out / f'{name}.gz').read_bytes()) == gzip.decompress(
            (DATA / f'{name}.gz').read_bytes()
        ), name
    assert (out / 'golden_full_covariance.csv').read_bytes() == gzip.decompress(
        (DATA / 'golden_full_covariance.csv.gz').read_bytes()
    )


@pytest.mark.slow
def test_driver_reproduces_the_shared_goldens(shared_data, tmp_path):
    """On the shipped s1 and s2 inputs the driver writes the shipped goldens, byte for byte."""
    driver = _build_driver()
    sys.path.insert(0, str(TOOLS))
    try:
        import rl_golden
    finally:
        sys.path.remove(str(TOOLS))
    for name in ('s1_circle2d_odom_imu_gps', 's2_gps_zero_cov_imu_3d'):
        src = shared_data / 'rl_golden' / name
        if not src.is_dir():
            pytest.skip(f'{src} missing')
        rl_golden.run(src, tmp_path / name, driver)
        for f in ('golden_ticks.csv', 'golden_full_covariance.csv'):
            assert (tmp_path / name / f).read_bytes() == (src / f).read_bytes(), (name, f)
        assert gzip.decompress((tmp_path / name / 'golden_updates.csv.gz').read_bytes()) == \
            gzip.decompress((src / 'golden_updates.csv.gz').read_bytes()), name

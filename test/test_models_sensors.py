# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the sensors' sample clock (vepd_ros.models.sensors): rates outside the supported range.

A rate outside the supported range is an error naming the rate, in the model and through
``vepd sensors simulate`` (exit 2).
"""

from __future__ import annotations

import pytest
from test_evaluate_study import _snapshot
from vepd_ros.cli import main as vepd


@pytest.mark.parametrize('rate', [1e-300, 1e12, float('inf'), float('nan'), 0.0])
def test_sensor_clock_rate_bounded(rate):
    """
    Refuse a rate outside the supported range in period_ns, naming rate_hz.

    models.sensors.period_ns: a rate outside [MIN_RATE_HZ, MAX_RATE_HZ] is a ValueError naming
    rate_hz (1e-300 Hz overflowed int(), 1e12 Hz gave a zero period and a ZeroDivisionError).
    """
    from vepd_ros.models.sensors import period_ns, sample_times

    with pytest.raises(ValueError, match='rate_hz'):
        period_ns(rate)
    with pytest.raises(ValueError, match='rate_hz'):
        sample_times(0.0, 3.0, rate)


@pytest.mark.parametrize('opt', ['--gps-rate', '--imu-rate'])
def test_sensors_simulate_tiny_rate_is_an_error(tmp_path, capsys, opt):
    out = tmp_path / 'out'
    assert vepd(['sensors', 'simulate', '--duration', '3', opt, '1e-300', '--out', str(out)]) == 2
    assert 'rate' in capsys.readouterr().err


def test_sensors_simulate_output_policy(tmp_path, capsys):
    """
    Keep a user's own CSVs in ``vepd sensors simulate --out`` unless --overwrite.

    `vepd sensors simulate --out DIR` keeps a user's own truth.csv/gps.csv: refused before
    simulating unless --overwrite; a re-run into its own previous output replaces its CSVs.
    """
    out = tmp_path / 'out'
    out.mkdir()
    for name in ('truth.csv', 'gps.csv', 'notes.txt'):
        (out / name).write_text('mine')
    before = _snapshot(out)
    sim = ['sensors', 'simulate', '--duration', '2', '--out', str(out)]
    assert vepd(sim) == 2
    err = capsys.readouterr().err
    assert str(out) in err and '--overwrite' in err and 'Traceback' not in err
    assert _snapshot(out) == before
    assert vepd(sim + ['--overwrite']) == 0
    assert (out / 'truth.csv').read_text() != 'mine'
    assert (out / 'notes.txt').read_text() == 'mine'  # not one of its files: kept
    assert vepd(sim + ['--seed', '3']) == 0  # its own output: re-run allowed
    assert (out / 'imu.csv').is_file()
    (tmp_path / 'file').write_text('mine')
    assert vepd(['sensors', 'simulate', '--duration', '2', '--out', str(tmp_path / 'file')]) == 2
    assert (tmp_path / 'file').read_text() == 'mine'

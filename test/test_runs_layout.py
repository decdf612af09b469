# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the batch layout (vepd_ros.runs.layout): indexes, run numbers and model folders.

A bad batch index is a clear error or warning naming the file, never a crash; no work proportional
to a number in a file name; a model folder named real is refused.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import test_runs_format
from test_runs_format import _evaluate
from vepd_ros.params import ParameterError
from vepd_ros.runs.layout import BatchWriter, MAX_RUN_INDEX, missing_indices, scan_batch_dir
from vepd_ros.runs.recorder import RecorderCore
from vepd_ros.testing.synthetic_runs import synthetic_run

root = test_runs_format.root  # the fixture, defined once


@pytest.mark.parametrize('value', [['a'], 3, {'x': 1}, '', 'x' * 1000])
def test_index_display_name_of_the_wrong_type(root, capsys, value):
    idx = root / 'Sim' / 'ch_rw' / 'index.json'
    d = json.loads(idx.read_text())
    d['display_name'] = value
    idx.write_text(json.dumps(d))
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(idx) in err and 'display_name' in err


def test_deep_or_binary_index_is_a_warning_not_a_crash(root, capsys):
    idx = root / 'Sim' / 'ch_rw' / 'index.json'
    idx.write_bytes(b'[' * 100_000)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 0 and 'unreadable batch index' in err and str(idx) in err


def test_stray_huge_run_number_is_refused_at_once(root, capsys):
    stray = root / 'Real' / 'straight_1000000000.csv'
    stray.write_text((root / 'Real' / 'straight_1.csv').read_text())
    t0 = time.process_time()
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and 'straight_1000000000.csv' in err and str(MAX_RUN_INDEX) in err
    assert time.process_time() - t0 < 30  # (a billion-element set took minutes)
    long = root / 'Real' / ('straight_' + '9' * 200 + '.csv')
    stray.unlink()
    long.write_text('x')
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and len(err) < 1000


def test_gap_check_is_proportional_to_the_files():
    assert missing_indices([1, 2, 5, MAX_RUN_INDEX]) == (
        MAX_RUN_INDEX - 4,
        [3, 4, 6, 7, 8, 9, 10, 11, 12, 13],
    )
    assert missing_indices([1, 2, 3]) == (0, [])


def test_gap_warning_within_the_limit(root):
    text = (root / 'Real' / 'straight_1.csv').read_text()
    (root / 'Real' / f'straight_{MAX_RUN_INDEX}.csv').write_text(text)
    _, warns = scan_batch_dir(root / 'Real', 'real')
    assert any('miss j = 4, 5, 6' in w and '...' in w for w in warns)


@pytest.mark.parametrize('name', ['real', 'REAL', 'Real_results', 'rEaL'])
def test_model_folder_named_real_is_refused(root, capsys, name):
    (root / 'Sim' / 'ch_rw').rename(root / 'Sim' / name)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and name in err and 'reference' in err


def test_writers_refuse_unsafe_names(tmp_path):
    rec = synthetic_run(np.random.default_rng(0), 'circle', 3.0)
    with pytest.raises(ParameterError, match='label'):
        BatchWriter(tmp_path, 'sim', '../escape')
    for bad in ('real', 'REAL', 'Real'):
        with pytest.raises(ValueError, match='reference'):
            BatchWriter(tmp_path, 'sim', bad)
    w = BatchWriter(tmp_path, 'sim', 'ok')
    with pytest.raises(ParameterError, match='scenario'):
        w.write(rec, '../../X')
    with pytest.raises(ParameterError, match='scenario'):
        RecorderCore(tmp_path, side='real', scenario='../x')
    assert sorted(p.name for p in tmp_path.rglob('*') if p.is_file()) == []

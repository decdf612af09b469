# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""`vepd evaluate ROOT [--json]` on the authors' layout and ours."""

from __future__ import annotations

import json

import pytest
from vepd_ros.cli import main
from vepd_ros.cli import main as vepd
from vepd_ros.runs.safety import MARKER_NAME
from vepd_ros.testing.synthetic_runs import write_synthetic_root


@pytest.fixture(scope='module')
def roots(tmp_path_factory):
    a = write_synthetic_root(
        tmp_path_factory.mktemp('authors'), 'authors', k=4, seed=1, duration_s=6.0
    )
    o = write_synthetic_root(
        tmp_path_factory.mktemp('ours'),
        'ours',
        k=4,
        seed=1,
        duration_s=6.0,
        models=('ch_rw', 'airsim'),
    )
    return a, o


def test_json_shape_on_authors_layout(roots, capsys):
    assert main(['evaluate', str(roots[0]), '--json', '--n-boot', '100']) == 0
    res = json.loads(capsys.readouterr().out)
    assert res['velocity'] == 'speed'
    assert {m: e['display_name'] for m, e in res['models'].items()} == {
        'chNormal': 'Ch:Gauss',
        'chWalk': 'Ch:RW',
        'AirSim': 'AirSim',
        'chNormal_AirSim': 'Ch:Gauss+AirSim',
        'chWalk_AirSim': 'Ch:RW+AirSim',
    }
    for e in res['models'].values():
        assert set(e) >= {'display_name', 'W1', 'W2', 'VEPD', 'ci95', 'per_scenario', 'rank'}
        assert list(e['per_scenario']) == ['rest', 'path', 'circle', 'sine']
        for p in e['per_scenario'].values():
            assert set(p) >= {'W1', 'W2', 'VEPD', 'rank', 'ci95'}
            assert len(p['ci95']) == 2 and p['ci95'][0] <= p['ci95'][1]  # rest too (its own draws)
    assert res['k']['real'] == {'rest': 4, 'path': 4, 'circle': 4, 'sine': 4}
    assert set(res['k']) == {
        'real',
        'chNormal',
        'chWalk',
        'AirSim',
        'chNormal_AirSim',
        'chWalk_AirSim',
    }


def test_text_tables_and_velocity_kinds_on_our_layout(roots, capsys):
    assert main(['evaluate', str(roots[1])]) == 0
    out = capsys.readouterr().out
    assert 'Table I' in out and 'Table II' in out and 'Ch:RW' in out and 'straight' in out
    assert main(['evaluate', str(roots[1]), '--json', '--velocity', 'vx', '--n-boot', '0']) == 0
    vx = json.loads(capsys.readouterr().out)  # strict JSON: no NaN even without an interval
    assert vx['velocity'] == 'vx' and vx['models']['ch_rw']['ci95'] is None
    assert all(p['ci95'] is None for p in vx['models']['ch_rw']['per_scenario'].values())
    assert (
        main(['evaluate', str(roots[0]), '--velocity', 'vector']) == 2
    )  # authors' files lack components
    assert 'needs the columns' in capsys.readouterr().err


def test_errors_and_strict_warnings(tmp_path, capsys):
    assert main(['evaluate', str(tmp_path / 'nope')]) == 2
    assert 'no such directory' in capsys.readouterr().err
    root = write_synthetic_root(
        tmp_path / 'r', 'authors', k=3, duration_s=4.0, models=('AirSim_results',)
    )
    (root / 'Sim' / 'AirSim_results' / 'sine_3.csv').unlink()
    assert main(['evaluate', str(root), '--n-boot', '0']) == 4  # sine 2 of 3: incomplete
    assert 'incomplete batch AirSim / sine: 2 of K = 3 runs' in capsys.readouterr().out
    assert main(['evaluate', str(root), '--strict', '--allow-incomplete', '--n-boot', '0']) == 3
    assert 'K differs' in capsys.readouterr().err
    (root / 'Sim' / 'AirSim_results' / 'sine_2.csv').unlink()  # one sine run left
    assert main(['evaluate', str(root)]) == 2
    assert 'at least 2' in capsys.readouterr().err


def test_evaluate_out_refuses_a_users_folder_and_reruns_into_its_own(tmp_path, capsys):
    """
    Refuse an --out folder holding the user's files in ``vepd evaluate``.

    `vepd evaluate ROOT --out DIR` follows contract C3 like study and report: a folder holding
    the user's files is refused before anything is computed or written; its own output is
    rewritten.
    """
    from vepd_ros.testing.synthetic_runs import write_synthetic_root

    root = write_synthetic_root(
        tmp_path / 'r', 'authors', k=3, duration_s=4.0, models=('AirSim_results',)
    )
    user = tmp_path / 'user'
    user.mkdir()
    (user / 'result.json').write_text('{"mine": 1}')
    argv = ['evaluate', str(root), '--n-boot', '0', '--allow-incomplete']
    assert vepd(argv + ['--out', str(user)]) == 2
    assert '--overwrite' in capsys.readouterr().err
    assert sorted(p.name for p in user.iterdir()) == ['result.json']
    assert (user / 'result.json').read_text() == '{"mine": 1}'
    own = tmp_path / 'ev'
    assert vepd(argv + ['--out', str(own)]) == 0
    assert vepd(argv + ['--out', str(own)]) == 0
    assert (own / MARKER_NAME).is_file() and (own / 'table1.csv').is_file()

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test ``vepd study`` end to end: offline, seeded, re-evaluable from disk.

`vepd study`: truth → models → built-in judge → runs → VEPD, offline, seeded, re-evaluable from
disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from vepd_ros.cli import main
from vepd_ros.cli import main as vepd
from vepd_ros.fileio import is_temp_name
from vepd_ros.pipelines.study import judge_batch, run_study, simulate_run
from vepd_ros.runs import read_run
from vepd_ros.runs.batch import evaluate_root


@pytest.fixture(scope='module')
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp('study')
    res = run_study(
        ['ch_gauss', 'ch_rw'],
        ['straight', 'circle'],
        runs=3,
        duration_s=6.0,
        reference='rtk',
        out_dir=out,
        seed=5,
        n_boot=100,
        fsync=False,
    )
    return out, res


def test_study_writes_runs_and_a_result_that_disk_reproduces(study):
    out, res = study
    assert res['k'] == {
        'real': {'straight': 3, 'circle': 3},
        'ch_gauss': {'straight': 3, 'circle': 3},
        'ch_rw': {'straight': 3, 'circle': 3},
    }
    assert [e['display_name'] for e in res['models'].values()] == ['Ch:Gauss', 'Ch:RW']
    again = evaluate_root(out, n_boot=100, seed=5)
    for m, e in res['models'].items():
        assert again['models'][m]['VEPD'] == e['VEPD'] and again['models'][m]['ci95'] == e['ci95']
    assert json.loads((out / 'result.json').read_text())['study']['reference'] == 'rtk'
    r = read_run(out / 'Sim' / 'ch_rw' / 'circle_2.csv')
    assert r.meta['model'] == 'ch_rw' and r.meta['judge'] == 'builtin' and r.meta['j'] == 2
    assert 180 < len(r.se_t) < 230 and len(r.gt_t) == 151  # 35 Hz filter output, 25 Hz truth, 6 s
    assert np.all(np.diff(r.se_t) > 0) and r.gt_v.max() > 0.5
    # the same truth for every model (seeded by scenario and run), different sensor noise
    g = read_run(out / 'Sim' / 'ch_gauss' / 'circle_2.csv')
    np.testing.assert_array_equal(g.gt_v, r.gt_v)
    assert (
        r.meta['seeds']['truth'] == g.meta['seeds']['truth']
        and r.meta['seeds']['gps'] != g.meta['seeds']['gps']
    )


def test_study_is_seeded(study, tmp_path):
    out, res = study
    res2 = run_study(
        ['ch_rw'],
        ['circle'],
        runs=3,
        duration_s=6.0,
        reference='rtk',
        out_dir=tmp_path,
        seed=5,
        n_boot=0,
        fsync=False,
    )
    a = read_run(out / 'Sim' / 'ch_rw' / 'circle_3.csv')
    b = read_run(tmp_path / 'Sim' / 'ch_rw' / 'circle_3.csv')
    np.testing.assert_array_equal(a.se_v, b.se_v)
    assert (
        res2['models']['ch_rw']['per_scenario']['circle']['VEPD']
        == res['models']['ch_rw']['per_scenario']['circle']['VEPD']
    )


def test_reference_directory_and_cli(study, tmp_path, capsys):
    out, _ = study
    assert (
        main(
            [
                'study',
                '--models',
                'airsim',
                '--scenarios',
                'circle,straight',
                '--runs',
                '3',
                '--duration',
                '6',
                '--reference',
                str(out),
                '--seed',
                '5',
                '--n-boot',
                '0',
                '--out',
                str(tmp_path / 's'),
                '--json',
            ]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert list(res['models']) == ['airsim'] and res['k']['real'] == {'straight': 3, 'circle': 3}
    assert (
        tmp_path / 's' / 'Real' / 'circle_1.csv'
    ).is_file()  # reference copied: OUT is self-contained


def test_bad_arguments(tmp_path, capsys):
    with pytest.raises(ValueError, match='not available offline'):
        run_study(['ch_rw'], ['circle'], 2, duration_s=4.0, reference='rtk', out_dir=tmp_path,
                  judge='robot_localization')
    with pytest.raises(ValueError, match='unknown GPS model'):
        run_study(['nope'], ['circle'], 2, duration_s=4.0, reference='rtk', out_dir=tmp_path)
    with pytest.raises(ValueError, match='neither a directory'):
        run_study(['ch_rw'], ['circle'], 2, duration_s=4.0, reference=str(tmp_path / 'missing'),
                  out_dir=tmp_path)
    with pytest.raises(ValueError, match='>= 2'):
        run_study(['ch_rw'], ['circle'], 1, duration_s=4.0, reference='rtk', out_dir=tmp_path)


def test_judge_step_alone():
    sims = [
        simulate_run('ch_rw', 'ch_rw', 'ch_drift_paper', 'straight', j=j, duration_s=4.0,
                     seed=0) for j in (1, 2)
    ]
    est = judge_batch([s.sensors for s in sims])
    assert len(est) == 2 and all(len(t) == len(vx) == len(vy) for t, vx, vy in est)


def test_shared_truth_gives_the_same_sensor_runs():
    from vepd_ros.pipelines.study import simulate_run, truth_samples

    shared = truth_samples('sine', 2, 4.0, seed=3)
    for label, model in (('ch_rw', 'ch_rw'), ('real', 'rtk')):
        a = simulate_run(label, model, 'ch_drift_paper', 'sine', j=2, duration_s=4.0, seed=3)
        b = simulate_run(label, model, 'ch_drift_paper', 'sine', j=2, duration_s=4.0, seed=3,
                         truth=shared)
        for x, y in (
            (a.sensors.gps.position_enu, b.sensors.gps.position_enu),
            (a.sensors.gps_lla, b.sensors.gps_lla),
            (a.sensors.imu.linear_acceleration, b.sensors.imu.linear_acceleration),
            (a.sensors.imu.orientation, b.sensors.imu.orientation),
            (a.sensors.truth_t_s, b.sensors.truth_t_s),
        ):
            assert x.tobytes() == y.tobytes()
    assert not shared.truth_t_s.flags.writeable  # shared between models: read-only


def test_truth_order_groups_runs_by_truth_and_keeps_each_labels_order():
    from vepd_ros.pipelines.study import truth_order

    specs = [
        (lb, lb, sc, j)
        for lb in ('real', 'a', 'b')
        for sc in ('straight', 'circle')
        for j in (1, 2)
    ]
    got = [specs[i] for i in truth_order(specs)]
    assert [(s[2], s[3]) for s in got[:3]] == [('straight', 1)] * 3 and [
        s[0] for s in got[:3]
    ] == ['real', 'a', 'b']
    for lb in ('real', 'a', 'b'):
        assert [s for s in got if s[0] == lb] == [s for s in specs if s[0] == lb]


def test_study_files_do_not_depend_on_workers_or_chunks(tmp_path, monkeypatch):
    """
    Write the same bytes with one process as with the worker pool.

    Workers write the runs; the bytes on disk (runs, sidecars, index.json) and result.json are the
    same for one process with small chunks and for the default pool.
    """
    import vepd_ros.pipelines.study as pl

    args = (['ch_gauss', 'ch_rw'], ['straight', 'circle'], 2)
    kw = {'duration_s': 4.0, 'reference': 'rtk', 'seed': 4, 'n_boot': 50}
    pl.run_study(*args, out_dir=tmp_path / 'a', **kw)
    monkeypatch.setattr(pl, 'CHUNK_RUNS', 5)
    pl.run_study(*args, out_dir=tmp_path / 'b', workers=1, fsync=False, **kw)
    fa = sorted(p.relative_to(tmp_path / 'a') for p in (tmp_path / 'a').rglob('*') if p.is_file())
    fb = sorted(p.relative_to(tmp_path / 'b') for p in (tmp_path / 'b').rglob('*') if p.is_file())
    # runs + sidecars, 3 indexes, result.json, the output marker
    assert fa == fb and len(fa) == 2 * 3 * 2 * 2 + 3 + 1 + 1
    for f in fa:
        a, b = (tmp_path / 'a' / f).read_text(), (tmp_path / 'b' / f).read_text()
        if f.name == 'result.json':
            a, b = (json.loads(x) for x in (a, b))
            a['root'] = b['root'] = None
        assert a == b, f


REPO = Path(__file__).resolve().parents[1]
STUDY = [
    'study',
    '--models',
    'ch_rw',
    '--scenarios',
    'circle',
    '--runs',
    '2',
    '--duration',
    '4',
    '--reference',
    'rtk',
    '--n-boot',
    '0',
]


def _snapshot(root: Path) -> dict:
    """Every file under root (but a killed writer's hidden temporary) with its bytes and mtime."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob('*'))
        if p.is_file() and not is_temp_name(p.name)
    }


def test_study_refuses_a_user_directory_and_replaces_its_own_output(tmp_path, capsys):
    out = tmp_path / 'out'
    (out / 'Real').mkdir(parents=True)
    (out / 'Real' / 'straight_1.csv').write_text('my data')
    (out / 'result.json').write_text('{"mine": 1}')
    before = _snapshot(out)
    assert vepd(STUDY + ['--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert str(out) in err and '--overwrite' in err and 'Traceback' not in err
    assert _snapshot(out) == before  # nothing replaced
    assert vepd(STUDY + ['--out', str(out), '--overwrite']) == 0
    assert not (out / 'Real' / 'straight_1.csv').exists()
    assert (out / 'Real' / 'circle_1.csv').is_file()
    # re-running into its own previous output replaces it (documented: no resume); a stale model
    # goes
    (out / 'Sim' / 'old_model').mkdir()
    assert vepd(STUDY + ['--out', str(out)]) == 0
    assert not (out / 'Sim' / 'old_model').exists()
    assert (out / 'Sim' / 'ch_rw' / 'circle_2.csv').is_file()


KILL_SCRIPT = textwrap.dedent("""
    import sys
    from vepd_ros.pipelines.study import run_study
    run_study(['ch_gauss', 'ch_rw', 'airsim'], ['straight', 'circle', 'sine'], runs=12,
              duration_s=10.0, reference='rtk', out_dir=sys.argv[1], n_boot=0, workers=2,
              fsync=False)
""")


@pytest.mark.slow
def test_killed_study_leaves_no_worker_and_writes_nothing_after(tmp_path):
    psutil = pytest.importorskip('psutil')
    out = tmp_path / 'out'
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, '-c', KILL_SCRIPT, str(out)],
        env=env,
        cwd=str(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 120
        workers = []
        while time.monotonic() < deadline and proc.poll() is None:  # the first chunk is on disk
            workers = list(parent.children(recursive=True))
            # the study is built beside OUT (safety.output_dir) and swapped in when complete
            if len(workers) >= 2 and list(tmp_path.glob('.out.vepd-stage-*/**/*.csv')):
                break
            time.sleep(0.02)
        assert proc.poll() is None, 'the study finished before it could be killed; make it longer'
        workers = parent.children(recursive=True)
        assert workers, 'no worker processes seen'
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        snap = _snapshot(tmp_path)  # what exists when the study is gone
        # an orphaned worker would finish its chunk (and write it) before it noticed
        gone, alive = psutil.wait_procs(workers, timeout=60)
        assert not alive, f'workers survived their parent: {[p.pid for p in alive]}'
        time.sleep(0.5)  # settle: any late writer would show
        assert _snapshot(tmp_path) == snap, 'files were written after the study was killed'
        assert list(tmp_path.glob('.out.vepd-stage-*/**/*.csv'))  # (the kill landed mid-study)
        assert not out.exists()  # a killed study leaves no output, only its staging directory
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    'extra, named',
    [
        (['--imu', 'zzz'], 'zzz'),
        (['--models', 'ch_rw', '--reference', 'zzz'], 'zzz'),
        (['--runs', '1000000000'], 'runs'),
        (['--duration', '1e-9'], 'duration'),
        (['--duration', 'nan'], 'duration'),
    ],
)
def test_study_refuses_bad_models_and_sizes_before_any_work(tmp_path, capsys, extra, named):
    """
    Check models, K and the duration in the parent before any worker starts.

    Models are built, and K and the duration checked against stated bounds, in the parent:
    exit 2 naming the value, OUT never created, no worker started.
    """
    out = tmp_path / 'out'
    assert vepd(STUDY + extra + ['--out', str(out)]) == 2
    err = capsys.readouterr().err
    assert named in err and 'Traceback' not in err
    assert not out.exists()

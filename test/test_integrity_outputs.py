# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test that outputs never replace the user's files nor escape --out.

Issue 17, outputs: nothing of the user's is replaced without --overwrite, nothing is written
outside --out (names that become paths are one safe component), and a killed study's workers die
with it.
"""

from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.fileio import is_temp_name
from vepd_ros.io.write_bag import streams_from_sensor_run, write_bag
from vepd_ros.params import ParameterError
from vepd_ros.pipelines import study as pipeline
from vepd_ros.runs.layout import BatchWriter
from vepd_ros.runs.recorder import RecorderCore
from vepd_ros.runs.safety import (
    check_output_dir,
    MARKER_NAME,
    output_dir,
    OutputDirError,
    safe_component,
)
from vepd_ros.testing.synthetic_runs import synthetic_run

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


@pytest.mark.parametrize(
    'value', ['ch_rw', 'ch_gauss+airsim', 'chNormal_AirSim', 'circle', 'run.2', 'A-1']
)
def test_safe_component_keeps_names(value):
    assert safe_component('label', value) == value


@pytest.mark.parametrize(
    'value',
    [
        '',
        '.',
        '..',
        '../../X',
        '/abs/dir',
        'a/b',
        'a\\b',
        'a\x00b',
        '-rf',
        '.hidden',
        'x' * 101,
        'ü',
        'a b',
        None,
        3,
    ],
)
def test_safe_component_refuses_paths_and_odd_names(value):
    with pytest.raises(ParameterError, match='label'):
        safe_component('label', value)


def test_safe_component_message_is_bounded():
    with pytest.raises(ParameterError) as e:
        safe_component('scenario', '/' * 10_000)
    assert len(str(e.value)) < 400


def test_output_dir_policy(tmp_path):
    user = tmp_path / 'mine'
    user.mkdir()
    (user / 'notes.txt').write_text('keep me')
    with pytest.raises(OutputDirError, match='--overwrite') as e:
        check_output_dir(user, command='study')
    assert str(user) in str(e.value)
    f = tmp_path / 'file'
    f.write_text('x')
    with pytest.raises(OutputDirError, match='not a directory'):
        with output_dir(f, command='study', overwrite=True):
            pass
    # a previous output of the same command is accepted; of another command it is not
    out = tmp_path / 'new' / 'out'
    with output_dir(out, command='study', replaces=['Sim']) as stage:
        (stage / 'Sim').mkdir()
        (stage / 'Sim' / 'old.csv').write_text('1')
        (stage / 'other.txt').write_text('2')
    with output_dir(out, command='study', replaces=['Sim']) as stage:
        assert not (stage / 'Sim').exists()
    assert not (out / 'Sim').exists()
    assert (out / 'other.txt').read_text() == '2'  # only what it owns
    with pytest.raises(OutputDirError, match='vepd study'):
        check_output_dir(out, command='bag')
    # --overwrite: the owned entries replaced, the user's other files untouched
    with output_dir(user, command='study', overwrite=True, replaces=['Sim', 'result.json']):
        pass
    assert (user / 'notes.txt').read_text() == 'keep me' and (user / MARKER_NAME).is_file()
    with pytest.raises(ValueError, match='not inside'):
        with output_dir(out, command='study', replaces=['../mine']):
            pass


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


def test_report_output_policy(tmp_path, capsys):
    root = tmp_path / 'root'
    assert vepd(STUDY + ['--out', str(root)]) == 0
    mine = tmp_path / 'mine'
    mine.mkdir()
    (mine / 'report.md').write_text('my report')
    assert vepd(['report', str(root), '--out', str(mine), '--n-boot', '0', '--no-progress']) == 2
    assert (mine / 'report.md').read_text() == 'my report'
    assert '--overwrite' in capsys.readouterr().err
    assert vepd(['report', str(root), '--n-boot', '0', '--no-progress']) == 0
    # its own output: again
    assert vepd(['report', str(root), '--n-boot', '0', '--no-progress']) == 0


def _small_bag(tmp_path):
    sim = pipeline.simulate_run('ref', 'ch_gauss', 'ch_drift_paper', 'circle', 1, 8.0, 3)
    s = streams_from_sensor_run(sim.sensors, truth=('gps_vel',))
    t = s['gps_vel']['t_ns']
    zero = np.zeros(len(t))
    s['odom'] = {'t_ns': t, 'linear': np.column_stack([np.full(len(t), 0.5), zero, zero])}
    return write_bag(tmp_path / 'bag', s, storage='sqlite3')


BAG = ['--profile', 'art', '--estimate', 'recorded', '--quiet']


def test_bag_names_never_leave_out(tmp_path, capsys):
    bag = _small_bag(tmp_path)
    work = tmp_path / 'work'
    out = work / 'a' / 'b' / 'c' / 'out'
    before = _snapshot(tmp_path)
    outside = tmp_path / 'abs_target'
    attempts = [
        ['--scenario', '../../../X'],
        ['--side', 'sim', '--label', str(outside)],
        ['--side', 'sim', '--label', '..'],
        ['--scenario', '/etc/x'],
        ['--split', 'stationary', '--scenarios', 'circle,../../Y'],
    ]
    for extra in attempts:
        assert vepd(['bag', str(bag), *BAG, '--out', str(out), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert 'Traceback' not in err and ('scenario' in err or 'label' in err), err
    ranges = tmp_path / 'ranges.csv'
    ranges.write_text('start,end,scenario\n0,3.5,circle\n4,7.5,../../../X\n')
    assert (
        vepd(
            [
                'bag',
                str(bag),
                *BAG,
                '--split',
                'ranges',
                '--ranges',
                str(ranges),
                '--out',
                str(out),
            ]
        )
        == 2
    )
    assert 'scenario' in capsys.readouterr().err
    after = _snapshot(tmp_path)
    assert after.keys() - before.keys() == {'ranges.csv'}  # nothing written anywhere, not half
    assert not outside.exists() and not (work / 'X_1.csv').exists()


def test_bag_output_policy(tmp_path, capsys):
    bag = _small_bag(tmp_path)
    mine = tmp_path / 'mine'
    mine.mkdir()
    (mine / 'thesis.tex').write_text('x')
    assert vepd(['bag', str(bag), *BAG, '--out', str(mine), '--scenario', 'circle']) == 2
    assert '--overwrite' in capsys.readouterr().err and not (mine / 'Real').exists()
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle']) == 0
    # a previous output: runs are added (circle_2)
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle']) == 0
    assert (out / 'Real' / 'circle_2.csv').is_file()
    assert (
        vepd(['bag', str(bag), *BAG, '--out', str(out), '--scenario', 'circle', '--overwrite'])
        == 0
    )
    assert sorted(p.name for p in (out / 'Real').glob('*.csv')) == ['circle_1.csv']  # replaced
    assert (
        vepd(['bag', str(bag), *BAG, '--out', str(mine), '--scenario', 'circle', '--overwrite'])
        == 0
    )
    assert (mine / 'thesis.tex').read_text() == 'x' and (mine / 'Real' / 'circle_1.csv').is_file()


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


def test_parameter_error_crosses_a_process_boundary():
    """
    Carry a worker's ParameterError to the parent with its fields.

    A ParameterError raised in a study worker reaches the parent: it pickles with its fields
    (a pool whose worker error cannot be unpickled waits forever).
    """
    import multiprocessing as mp
    import pickle

    from vepd_ros.models.imu import make_imu_model

    err = pickle.loads(pickle.dumps(ParameterError('model', 'zzz', 'an IMU model')))
    assert (err.name, err.value, err.expected) == ('model', 'zzz', 'an IMU model')
    assert str(err) == str(ParameterError('model', 'zzz', 'an IMU model'))
    with mp.get_context('fork').Pool(1) as pool:
        res = pool.apply_async(make_imu_model, ('zzz',))
        with pytest.raises(ParameterError, match='zzz'):
            res.get(timeout=60)


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


_BOOT_CMDS = [['study'] + STUDY[1:] + ['--out', 'OUT'], ['evaluate', 'ROOT'], ['report', 'ROOT']]


@pytest.mark.parametrize(
    'cmd, opt, value',
    [
        (c, '--seed', '-1')
        for c in _BOOT_CMDS
        + [['sensors', 'simulate', '--out', 'OUT'], ['bag', 'B.mcap', '--out', 'OUT']]
    ]
    + [(c, '--n-boot', v) for c in _BOOT_CMDS for v in ('-1', '1000000000000')],
)
def test_seed_and_n_boot_are_refused_naming_the_option(tmp_path, capsys, cmd, opt, value):
    """
    Refuse a negative seed or a bad --n-boot with exit 2.

    A negative seed, a negative or unbounded --n-boot: argparse exit 2 naming the option and
    the bound, before anything is read or written.
    """
    cmd = [str(tmp_path / c) if c in ('OUT', 'ROOT') else c for c in cmd]
    if '--n-boot' in cmd:
        i = cmd.index('--n-boot')
        del cmd[i: i + 2]
    with pytest.raises(SystemExit) as exc:
        vepd(cmd + [opt, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f'argument {opt}:' in err and ('>= 0' in err or '100000' in err)
    assert not (tmp_path / 'OUT').exists()


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


@pytest.mark.parametrize('label', ['real', 'REAL', 'Real_results', 'REAL_results', 'real_results'])
def test_bag_refuses_a_label_evaluate_would_read_as_the_reference(tmp_path, capsys, label):
    """
    Refuse a reference label in ``vepd bag --side sim`` before writing.

    `vepd bag --side sim --label L` applies the reader's own check (layout.is_reference_label:
    any case, the authors' `_results` dropped): a label evaluate would refuse as Sim/<L>/ is
    refused before anything is written.
    """
    from vepd_ros.runs.layout import is_reference_label

    assert is_reference_label(label) and not is_reference_label('REAL_RESULTS_x')
    bag = _small_bag(tmp_path)
    out = tmp_path / 'out'
    assert vepd(['bag', str(bag), *BAG, '--out', str(out), '--side', 'sim', '--label', label]) == 2
    err = capsys.readouterr().err
    assert '--label' in err and label in err and 'Traceback' not in err
    assert not out.exists()
    with pytest.raises(ValueError, match='reference side'):
        BatchWriter(tmp_path / 'w', 'sim', label)

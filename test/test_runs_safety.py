# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
runs.safety: output directories replaced only whole, one writer each, bounded inputs (issue 24).

Each test states a property of ``output_dir`` / ``output_file`` / ``read_input`` /
``check_memory_plan`` / ``claim_graph_output``: a failed, refused or killed writer leaves the
previous output byte for byte as it was; a second writer is refused naming the first; a FIFO or
device is refused before a byte is read.
"""

from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from vepd_ros.fileio import load_json, RunFileError
from vepd_ros.params import ParameterError
from vepd_ros.runs.safety import (
    check_memory_plan,
    check_output_dir,
    check_output_file,
    claim_graph_output,
    Discard,
    ENDED,
    mark_graph_output,
    MARKER_NAME,
    output_dir,
    output_file,
    OutputDirError,
    read_output_marker,
    safe_component,
)
from vepd_ros.yamlio import load_yaml, read_input

REPO = Path(__file__).resolve().parents[1]


def _tree(root: Path) -> dict:
    """Every file and directory under root with its bytes (directories: None)."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob('*'))}


def _previous(out: Path) -> dict:
    with output_dir(out, command='study', replaces=['Sim', 'result.json']) as stage:
        (stage / 'Sim' / 'm').mkdir(parents=True)
        (stage / 'Sim' / 'm' / 'circle_1.csv').write_text('old run\n')
        (stage / 'result.json').write_text('{"old": 1}\n')
        (stage / 'notes.txt').write_text('kept\n')
    return _tree(out)


def test_new_output_appears_only_when_complete(tmp_path):
    out = tmp_path / 'a' / 'out'
    with output_dir(out, command='study') as stage:
        assert stage.parent == out.parent and stage != out and stage.is_dir()
        (stage / 'result.json').write_text('{}')
        assert not out.exists()  # nothing at OUT before the swap
    assert (out / 'result.json').read_text() == '{}'
    assert read_output_marker(out)['command'] == 'study'
    assert sorted(p.name for p in out.parent.iterdir()) == ['out']  # no stage, no lock left


@pytest.mark.parametrize('exc', [RuntimeError('boom'), KeyboardInterrupt(), ValueError('bad')])
def test_failed_rerun_leaves_previous_output_byte_for_byte(tmp_path, exc):
    out = tmp_path / 'out'
    before = _previous(out)
    ENDED.clear()
    with pytest.raises(type(exc)):
        with output_dir(out, command='study', replaces=['Sim', 'result.json']) as stage:
            assert not (stage / 'Sim').exists() and not (stage / 'result.json').exists()
            assert (stage / 'notes.txt').read_text() == 'kept\n'  # what it does not own: carried
            (stage / 'result.json').write_text('{"new": 1}')
            raise exc
    assert _tree(out) == before
    assert ENDED == [f'{out}: left as it was']
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out']


def test_discard_keeps_previous_output_without_an_exception(tmp_path):
    out = tmp_path / 'out'
    before = _previous(out)
    with output_dir(out, command='study', replaces=['Sim', 'result.json']) as stage:
        (stage / 'result.json').write_text('{"incomplete": 1}')
        raise Discard(1)
    assert _tree(out) == before


def test_rerun_replaces_owned_entries_and_keeps_the_rest(tmp_path):
    out = tmp_path / 'out'
    _previous(out)
    with output_dir(out, command='study', replaces=['Sim', 'result.json']) as stage:
        (stage / 'result.json').write_text('{"new": 1}\n')
    assert (out / 'result.json').read_text() == '{"new": 1}\n'
    assert not (out / 'Sim').exists()
    assert (out / 'notes.txt').read_text() == 'kept\n'


def test_refused_output_is_not_touched(tmp_path):
    mine = tmp_path / 'mine'
    mine.mkdir()
    (mine / 'thesis.tex').write_text('x')
    before = _tree(mine)
    with pytest.raises(OutputDirError, match='--overwrite'):
        with output_dir(mine, command='study'):
            pytest.fail('entered a refused output directory')
    assert _tree(mine) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['mine']


def test_second_writer_is_refused_naming_the_first(tmp_path):
    out = tmp_path / 'out'
    before = _previous(out)
    with output_dir(out, command='study', replaces=['Sim', 'result.json']):
        with pytest.raises(OutputDirError, match=f'pid {os.getpid()}, vepd study'):
            with output_dir(out, command='study'):
                pytest.fail('two writers on one output directory')
        assert _tree(out) == before
    f = tmp_path / 'f.csv'
    with output_file(f, command='judge replay'):
        with pytest.raises(OutputDirError, match='being written.*judge replay'):
            with output_file(f, command='judge replay'):
                pass


def test_patterns_and_bad_replaces(tmp_path):
    out = tmp_path / 'out'
    with output_dir(out, command='report') as stage:
        (stage / 'fig1.png').write_text('1')
        (stage / 'user.png').write_text('2')
    with output_dir(out, command='report', replaces=['fig*.png']) as stage:
        assert sorted(p.name for p in stage.iterdir()) == ['user.png']
    for bad in ('../x', '/abs', ''):
        with pytest.raises(ValueError, match='not inside'):
            with output_dir(out, command='report', replaces=[bad]):
                pass


def test_live_entry_is_taken_as_it_is_at_the_end(tmp_path):
    out = tmp_path / 'out'
    with output_dir(out, command='tune') as stage:
        (stage / 'study.db').write_text('1 trial')
    with output_dir(out, command='tune', live=['study.db'], replaces=['result.json']) as stage:
        assert not (stage / 'study.db').exists()  # not copied at the start
        (out / 'study.db').write_text('2 trials')  # updated in place while the command runs
    assert (out / 'study.db').read_text() == '2 trials'


KILLED = textwrap.dedent("""
    import sys, time
    from vepd_ros.runs.safety import output_dir
    with output_dir(sys.argv[1], command='study', replaces=['result.json']) as stage:
        (stage / 'result.json').write_text('half')
        print('in', flush=True)
        time.sleep(60)
""")


@pytest.mark.parametrize('sig', [signal.SIGKILL, signal.SIGTERM])
def test_killed_writer_leaves_previous_output_and_the_next_one_cleans_up(tmp_path, sig):
    out = tmp_path / 'out'
    before = _previous(out)
    with subprocess.Popen([sys.executable, '-c', KILLED, str(out)], stdout=subprocess.PIPE,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), text=True) as p:
        assert p.stdout.readline().strip() == 'in'
        p.send_signal(sig)
        p.wait(timeout=60)
    assert _tree(out) == before
    stages = [q.name for q in tmp_path.iterdir() if 'vepd-stage' in q.name]
    assert stages if sig == signal.SIGKILL else True
    with output_dir(out, command='study', replaces=['result.json']):  # the lock was released
        pass
    assert not [q for q in tmp_path.iterdir() if 'vepd-stage' in q.name]


def test_two_rename_swap_killed_between_renames_is_put_back(tmp_path):
    out = tmp_path / 'out'
    before = _previous(out)
    os.rename(out, tmp_path / '.out.vepd-old-999999-abcd')  # as a writer killed mid-swap left it
    (tmp_path / '.out.vepd-stage-999999-abcd').mkdir()
    with pytest.raises(RuntimeError):
        with output_dir(out, command='study'):
            raise RuntimeError
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['out']


def test_output_file_needs_overwrite(tmp_path):
    f = tmp_path / 'x.csv'
    with output_file(f, command='judge replay') as p:
        p.write_text('1')
    with pytest.raises(OutputDirError, match='--overwrite'):
        with output_file(f, command='judge replay'):
            pytest.fail('an existing file replaced without --overwrite')
    assert f.read_text() == '1'
    with output_file(f, command='judge replay', overwrite=True):
        pass
    with pytest.raises(OutputDirError, match='directory'):
        check_output_file(tmp_path, overwrite=True)


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / 'in.yaml'
    os.mkfifo(p)
    return p


def test_fifo_and_devices_refused_before_any_read(fifo):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match='FIFO'):
        read_input(fifo, what='x', max_bytes=10)
    with pytest.raises(ValueError, match=str(fifo)):
        load_yaml(fifo, what='ekf configuration')
    with pytest.raises(RunFileError, match='FIFO'):
        load_json(fifo)
    with pytest.raises(ValueError, match='special file'):
        load_yaml('/dev/zero', what='x')
    with pytest.raises(ValueError, match='directory'):
        load_yaml(fifo.parent, what='x')
    assert time.monotonic() - t0 < 10  # nothing blocked on the FIFO


def test_read_input_bounds(tmp_path):
    f = tmp_path / 'big'
    f.write_bytes(b'x' * 100)
    assert read_input(f, what='x', max_bytes=100) == b'x' * 100
    with pytest.raises(ValueError, match='more than'):
        read_input(f, what='x', max_bytes=99)
    assert read_input(f, what='x', max_bytes=10, prefix=True) == b'x' * 10
    with pytest.raises(FileNotFoundError):
        read_input(tmp_path / 'none', what='x', max_bytes=10)


def test_memory_plan_refuses_naming_the_flags():
    check_memory_plan(1e6, '--runs')
    with pytest.raises(ValueError, match=r'--runs 1000 x --duration.*GiB'):
        check_memory_plan(1e18, '--runs 1000 x --duration 1e6')


def test_graph_output_claim(tmp_path):
    new = tmp_path / 'new'
    claim_graph_output(new)  # new: claimed, marked as this graph's
    assert read_output_marker(new)['state'] == 'running'
    claim_graph_output(new)  # a node restarted: continues it
    mark_graph_output(new, 'complete')
    with pytest.raises(ParameterError, match='finished graph output'):
        claim_graph_output(new)
    study = tmp_path / 'study'
    with output_dir(study, command='study') as stage:
        (stage / 'result.json').write_text('{}')
    before = _tree(study)
    with pytest.raises(ParameterError, match="output_dir.*'vepd study'"):
        claim_graph_output(study)
    real = tmp_path / 'real'
    (real / 'Real').mkdir(parents=True)
    (real / 'Real' / 'circle_1.csv').write_text('mine')
    with pytest.raises(ParameterError, match='no graph wrote'):
        claim_graph_output(real)
    assert _tree(study) == before and (real / MARKER_NAME).exists() is False


def test_graph_output_claimed_while_another_node_writes_its_marker(tmp_path):
    # nodes of one graph start at once (ros2 launch, vepd run --processes): a node that finds
    # only another's marker being written (its temporary file) claims the directory too; this
    # refused ("files that no graph wrote"), the recorder exited 2 and the launch ended with 1
    out = tmp_path / 'out'
    out.mkdir()
    (out / f'.{MARKER_NAME}.tmp-4242-0a1b2c3d').write_text('{"comm')
    claim_graph_output(out)
    assert read_output_marker(out)['state'] == 'running'
    other = tmp_path / 'other'
    other.mkdir()
    (other / 'notes.txt').write_text('mine')
    with pytest.raises(ParameterError, match='no graph wrote'):
        claim_graph_output(other)


def test_deep_xml_refused_naming_the_file(tmp_path):
    from vepd_ros.io.simconfig import read_sdf

    f = tmp_path / 'deep.sdf'
    f.write_text('<?xml version="1.0"?>' + '<a>' * 50_000 + '</a>' * 50_000)
    with pytest.raises(ValueError, match=f'{f}: line 1: elements nested deeper'):
        read_sdf(f)


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

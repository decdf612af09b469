# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the worked examples in ``vepd`` help and quiet ends on a closed pipe.

`vepd --help` and the offline commands' --help show a worked example; a closed pipe ends
quietly.
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest
from vepd_ros.cli import main
from vepd_ros.testing.synthetic_runs import write_synthetic_root

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize('argv', [[], ['study'], ['evaluate'], ['report']])
def test_help_has_a_worked_example(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv + ['--help'])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert 'Example' in text
    example = text.split('Example', 1)[1]
    assert f'vepd {argv[0] if argv else "study"} ' in example  # the example uses the command
    assert '%%' not in text  # no argparse escape shown literally
    assert all(len(line) <= 110 for line in text.splitlines())


@pytest.mark.parametrize('argv', [['--help'], ['bag', '--help'], ['run', '--help']])
def test_help_loads_no_numpy(argv):
    """
    `vepd --help` (and a command's) imports no numpy: a short command's start-up stays short.

    The parser is built from every command's declarations; what they import at load (topic names,
    profiles, the ROS graph description) must not pull numpy in (issue 14: start-up no slower).
    """
    code = ('import sys\nfrom vepd_ros.cli import main\ntry:\n    main(sys.argv[1:])\n'
            'except SystemExit:\n    pass\n'
            'print(sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "scipy")))')
    p = subprocess.run([sys.executable, '-c', code, *argv], capture_output=True, text=True,
                       cwd=REPO, timeout=60, check=True)
    assert p.stdout.strip().splitlines()[-1] == '[]'


def test_evaluate_help_states_the_interval_and_its_seed(capsys):
    with pytest.raises(SystemExit):
        main(['evaluate', '--help'])
    text = capsys.readouterr().out
    assert '95 % interval' in text and 'study seed' in text


@pytest.mark.parametrize('argv', [['sensors', 'models'], ['sensors', 'models', 'ch_rw']])
def test_closed_pipe_ends_quietly_for_any_command(argv):
    """
    End quietly when the reader of ``vepd sensors models`` closes the pipe.

    `vepd sensors models | head`: the pipe is closed before the command writes (main() covers
    every subcommand, not only evaluate).
    """
    import os

    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(
            [sys.executable, '-m', 'vepd_ros.cli', *argv],
            cwd=REPO,
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(w)
    assert p.returncode == 1
    assert 'Traceback' not in p.stderr and 'BrokenPipeError' not in p.stderr, p.stderr


def test_an_unwritable_output_is_exit_2_naming_it(tmp_path, capsys):
    """
    Report an OSError as one line naming the path.

    An OSError (here --out under a regular file) is one line naming the path, not a
    traceback.
    """
    blocker = tmp_path / 'afile'
    blocker.write_text('')
    out = blocker / 'sim'
    assert (
        main(['sensors', 'simulate', '--scenario', 'circle', '--duration', '2', '--out', str(out)])
        == 2
    )
    err = capsys.readouterr().err
    assert str(out) in err and 'Traceback' not in err


def test_closed_pipe_ends_without_a_traceback(tmp_path):
    """
    End quietly when the reader of ``vepd evaluate --json`` closes the pipe.

    `vepd evaluate ROOT --json | head`: the reader closes the pipe before the JSON is
    written.
    """
    root = write_synthetic_root(
        tmp_path / 'r', 'authors', k=3, duration_s=4.0, models=('AirSim_results',)
    )
    cmd = [
        sys.executable,
        '-m',
        'vepd_ros.cli',
        'evaluate',
        str(root),
        '--json',
        '--runs',
        '--n-boot',
        '50',
    ]
    p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # as `head` does once it has its lines
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=120) == 1
    assert 'Traceback' not in err and 'BrokenPipeError' not in err, err

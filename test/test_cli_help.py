# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the worked examples in ``vepd`` help and quiet ends on a closed pipe.

`vepd --help` and the offline commands' --help show a worked example, and every example of every
help page runs as printed (exit 0); a closed pipe ends quietly.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import re
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


# -- every example of every help page, run as printed --------------------------------------------

SMALLER = [
    (r'--runs 10\b', '--runs 3'),
    (r'--duration 30\b', '--duration 6'),
    (r'--trials 100\b', '--trials 2'),
    (r'--workers 2\b', '--workers 1'),
]
"""Sizes that keep a paper-sized example short (the same command at a smaller size)."""

USER_FILES = {
    'robot.urdf': 'CLASSIC_URDF',
    'objects.json': json.dumps({'objects': [{'type': 'vehicle.tesla.model3', 'id': 'ego',
                                             'sensors': [{'type': 'sensor.other.gnss',
                                                          'id': 'gnss',
                                                          'noise_lat_stddev': 5e-6}]}]}),
    'sensors.yaml': 'gpsSensor:\n  SampleRate: 10\n  HorizontalPositionAccuracy: 0.5\n',
}
"""A user's own simulator files the sensors examples name (Gazebo URDF, CARLA objects, MATLAB)."""

MAKERS = {
    'tune1': 'vepd study --models ch_rw --scenarios circle --runs 3 --duration 6 --reference rtk '
             '--seed 1 --quiet --out ref1 && vepd tune --model ch_rw --params rw_sigma '
             '--reference ref1 --scenarios circle --runs 3 --duration 6 --trials 2 --no-landscape '
             '--out tune1',
}
"""An example's input another command writes (``vepd report tune1``: a ``vepd tune`` output)."""


def _help_pages() -> dict[str, str]:
    """Return every help page of ``vepd`` by name ('vepd', 'vepd bag', ...) and its text."""
    from vepd_ros.cli import build_parser

    pages = {}

    def walk(parser, name):
        pages[name] = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(child, f'{name} {sub}')

    walk(build_parser(), 'vepd')
    return pages


def help_examples(text: str) -> list[str]:
    """Return a help text's example commands: indented ``vepd ...`` lines, continuations joined."""
    out, cur = [], None
    for line in text.splitlines():
        s = line.strip()
        if cur is not None:
            cur += ' ' + s
        elif line.startswith('  ') and re.match(r'([A-Z_]+=\S+ )*vepd ', s):
            cur = s
        else:
            continue
        if cur.endswith('\\'):
            cur = cur[:-1].rstrip()
            continue
        out.append(re.sub(r'\s+#\s.*$', '', cur))  # the comment is not part of the command
        cur = None
    return out


def examples_by_page() -> dict[str, list[str]]:
    """
    Return each page's examples, in order (a later one may read what an earlier one wrote).

    A group's page (``vepd``, ``vepd sensors``) that only repeats examples of its commands' pages
    is left out: those pages run them, in their own order; so is a page whose examples are an
    earlier page's (one epilog shared). A synopsis (``a|b``, ``[...]``) is not an example.
    """
    pages = _help_pages()
    found = {
        name: [c for c in help_examples(text) if not re.search(r'\w\|\w|\[', c)]
        for name, text in pages.items()
    }
    by_page = {}
    for name, cmds in found.items():
        children = {c for other, cs in found.items() if other.startswith(name + ' ') for c in cs}
        if cmds and not set(cmds) <= children and cmds not in by_page.values():
            by_page[name] = cmds  # (pages sharing one epilog run it once)
    return by_page


EXAMPLES = examples_by_page()


def test_help_examples_are_found():
    """The parser of this test sees the examples the pages print (a page without any fails)."""
    assert {'vepd bag', 'vepd calibrate gps', 'vepd report', 'vepd run', 'vepd tune',
            'vepd demo'} <= set(EXAMPLES)
    for cmds in EXAMPLES.values():
        for cmd in cmds:
            assert '\\' not in cmd and not re.search(r'\s\.\.\.(\s|$)', cmd), cmd  # whole commands
            assert cmd.split()[-1] != '--scenario', cmd  # an option with its value on its line


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize('page', sorted(EXAMPLES))
def test_every_help_example_runs_as_printed(page, tmp_path, domain_id, shared_data):
    """
    Run each example of ``page`` as a user pastes it: exit 0, no traceback.

    In a fresh directory (the examples' relative outputs land there), one after the other as
    printed (a later one reads what an earlier wrote), with ``vepd`` from this venv on PATH.
    Substituted, nothing else: ``../shared/`` → the shared data, ``config/`` → this clone's,
    ``/tmp/`` → the test's directory, ``ROS_DOMAIN_ID=7`` → a leased domain, paper sizes →
    ``SMALLER``; a user's own simulator files are written first (``USER_FILES``), and an input
    another command makes is made first (``MAKERS``).
    """
    from test_simconfig import CLASSIC_URDF

    env = {k: v for k, v in os.environ.items() if k != 'ROS_DOMAIN_ID'}
    env['PATH'] = f'{Path(sys.executable).parent}{os.pathsep}{env.get("PATH", "")}'
    for name, text in USER_FILES.items():
        (tmp_path / name).write_text(CLASSIC_URDF if text == 'CLASSIC_URDF' else text)
    for cmd in EXAMPLES[page]:
        # /tmp/ first: the clone and ../shared may themselves live under /tmp (CI's do)
        run = cmd.replace('/tmp/', f'{tmp_path}/').replace(
            'ROS_DOMAIN_ID=7 ', f'ROS_DOMAIN_ID={domain_id} '
        )
        run = run.replace('../shared/', f'{shared_data.parent}/')
        run = re.sub(r'(?<=\s)config/', f'{REPO}/config/', run)
        for pattern, small in SMALLER:
            run = re.sub(pattern, small, run)
        for made, maker in MAKERS.items():
            if re.search(rf'\s{made}(\s|$)', run) and not (tmp_path / made).exists():
                pre = subprocess.run(['bash', '-c', maker], cwd=tmp_path, env=env,
                                     capture_output=True, text=True, timeout=600)
                assert pre.returncode == 0, (maker, pre.stderr[-2000:])
        proc = subprocess.run(['bash', '-c', run], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=900)
        said = f'{cmd}\nran: {run}\nstdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-2500:]}'
        assert proc.returncode == 0, said
        assert 'Traceback' not in proc.stderr, said

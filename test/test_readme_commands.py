# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run every command in the tables of README.md and the pages it links, as a new user would.

Every command in the `command` column of the tables of README.md, docs/running.md (the `vepd`
commands) and docs/benchmarks.md (the measured figures), run as a new user would (parsed from the
pages, so the test follows them).

Placeholders (DIR, STUDY, FILE, ...) become temporary directories, a small study made first, or
files in ../shared/data; a synopsis (``a|b``, ``...``) is checked through its ``--help``. The
assertion is that the exit status tells the truth: exit 0 comes with output (stdout or files) and
no NaN in what is printed; a command written out in full (no placeholder) must exit 0; any other
non-zero exit is a one-line error, never a traceback. Skipped with the reason: ``ros2 ...`` (a real
ROS 2 install), ``pytest ...`` and ``python benchmarks/...`` (the suite and ``make bench`` run
those), commands needing ../shared/data when it is absent.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest
from ros_helpers import REPO

README = REPO / 'README.md'
COMMAND_PAGES = (README, REPO / 'docs' / 'running.md', REPO / 'docs' / 'benchmarks.md')
"""The pages whose tables hold the commands a user runs: the front page and the two it links."""
INSTALL = REPO / 'docs' / 'install.md'
"""The page with the real ROS 2 install block (``real_ros_block``)."""
SHARED = REPO.parent / 'shared' / 'data'
PLACEHOLDERS = {
    'DIR',
    'DIR...',
    'STUDY',
    'ROOT',
    'BAG',
    'FILE',
    'S',
    'MODEL',
    'T',
    'N',
    'YAML',
    'INPUT',
    'CSV',
}
SMALL = {'vepd run sim_judge': ['scenarios:=circle', 'duration_s:=5']}
"""Extra arguments that keep a long example short (the graph's arguments: the last value wins)."""


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r'(?<!\\)\|', line.strip().strip('|'))]


def page_commands(page) -> list[str]:
    """
    Return the commands of one page's tables, in order, each once.

    The commands in the `command` column of the page's tables, in order, each once (a cell's
    `a` / `b` alternatives apart).
    """
    out: list[str] = []
    column = None
    lines = page.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith('|'):
            column = None
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if column is None and re.fullmatch(r'[|\-: ]+', nxt.strip() or 'x'):
            heads = _cells(line)
            column = heads.index('command') if 'command' in heads else -1
            continue
        if column is None or column < 0 or not line.strip('|-: '):
            continue
        cells = _cells(line)
        for code in re.findall(r'`([^`]+)`', cells[column] if column < len(cells) else ''):
            code = code.replace('\\|', '|').strip()
            if re.match(r'(vepd|ros2|python|pytest|make) ', code + ' ') and code not in out:
                out.append(code)
    return out


def readme_commands() -> list[str]:
    """Return the commands of the tables of every page of COMMAND_PAGES, in order, each once."""
    out: list[str] = []
    for page in COMMAND_PAGES:
        out += [code for code in page_commands(page) if code not in out]
    return out


def real_ros_block() -> list[str]:
    """
    Return the commands of docs/install.md's real ROS 2 install block, in order, no comments.

    The fenced ``bash`` block of "Real ROS 2 (Humble ..., Jazzy ...)": what a user of a ROS 2
    install types. test/test_package_colcon.py runs its colcon, source and vepd lines exactly.
    """
    text = INSTALL.read_text()
    start = text.index('**Real ROS 2')
    block = text[text.index('```bash\n', start) + 8:]
    block = block[: block.index('```')]
    return [
        re.sub(r'\s+#\s.*$', '', line).strip()
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith('#')
    ]


def test_real_ros_block_is_found():
    """The install block the colcon test runs is there, with the lines a ROS user runs."""
    lines = real_ros_block()
    assert 'colcon build --packages-select vepd_ros' in lines
    assert 'source install/setup.bash' in lines and 'vepd --help' in lines
    assert any(line.startswith('colcon test --packages-select vepd_ros') for line in lines)


def test_command_pages_have_commands():
    """Each command page still has its commands: the ways to run, the `vepd` tools, the figures."""
    for page, expect in zip(
        COMMAND_PAGES,
        ('vepd run sim_judge ', 'vepd tune --model ', 'vepd judge check '),
    ):
        assert any(code.startswith(expect) for code in page_commands(page)), (page, expect)


def _synopsis(words: list[str]) -> bool:
    return any('|' in w or w in ('...', '[name:=value', '...]') for w in words)


@pytest.fixture(scope='module')
def study(tmp_path_factory):
    """
    Make a small study directory for STUDY/ROOT.

    The layout is the one `vepd evaluate` and `vepd report` read.
    """
    out = tmp_path_factory.mktemp('study') / 'study'
    proc = subprocess.run(
        _vepd(
            [
                'study',
                '--models',
                'ch_gauss,ch_rw',
                '--scenarios',
                'circle',
                '--runs',
                '3',
                '--duration',
                '10',
                '--reference',
                'rtk',
                '--seed',
                '1',
                '--out',
                str(out),
            ]
        ),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def _vepd(args: list[str]) -> list[str]:
    return [sys.executable, '-m', 'vepd_ros.cli', *args]


def _need_shared(path):
    if not path.exists():
        pytest.skip(f'needs {path} (../shared/data beside the clone)')
    return str(path)


def _substitute(words: list[str], tmp_path, study) -> tuple[list[str], bool]:
    """(words with every placeholder replaced, whether the command was written out in full)."""
    out, full = [], True
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ''
        key = w.split('=')[-1].split(':=')[-1]
        if key not in PLACEHOLDERS:
            out.append(w)
            continue
        full = False
        if key == 'DIR...':
            out += [
                _need_shared(SHARED / 'rl_golden' / d)
                for d in ('s1_circle2d_odom_imu_gps', 's2_gps_zero_cov_imu_3d')
            ]
            continue
        if key in ('STUDY', 'ROOT') or (key == 'DIR' and words[:2] == ['vepd', 'report']):
            value = str(study)
        elif key == 'DIR':
            value = str(tmp_path / f'out{i}')
        elif key in ('BAG', 'INPUT'):
            if 'art' in words:
                pytest.skip(
                    'needs an ART bag (/fix, /imu, /sbg/gps_vel); ../shared has only its metadata'
                )
            value = _need_shared(SHARED / 'robot_localization_tests' / 'test1.bag')
        elif key == 'FILE':
            value = _need_shared(
                SHARED
                / 'real'
                / (
                    'nmea_rtk_fixed_static/nmea.log'
                    if 'gps' in words
                    else 'xio_imu_handheld/sensor_data.csv'
                )
            )
        elif key == 'MODEL':
            value = 'ch_rw' if prev == '--gps' else 'ch_drift_paper'
        elif key == 'YAML':
            value = str(
                REPO / 'config' / ('navsat.yaml' if prev == '--navsat-config' else 'ekf.yaml')
            )
        else:
            value = {'S': 'circle', 'T': '5', 'N': '1', 'CSV': str(tmp_path / 'replay.csv')}[key]
        out.append(w[: len(w) - len(key)] + value)
    return out, full


@pytest.mark.slow
@pytest.mark.parametrize('command', readme_commands())
def test_readme_command(command, tmp_path, request):
    words = shlex.split(command)
    if words[0] == 'ros2':
        pytest.skip(
            'needs a real ROS 2 install (ros2 CLI); the launch tests run it with '
            '../shared/ros2_tooling'
        )
    if words[0] in ('pytest', 'python', 'make'):
        pytest.skip(f'{words[0]} {words[1]}: run by make test / make bench, not here')
    words = list(re.sub(r'\[[^\]]*\]', '', command).split())  # optional parts left out
    if _synopsis(words):
        graph_words = [w for w in words[1:3] if '|' not in w and not w.startswith(('[', '.'))]
        for alt in words[2].split('|') if '|' in words[2] else [None]:
            cmd = _vepd([*graph_words, *([alt] if alt else []), '--help'])
            proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0 and 'usage' in proc.stdout, (cmd, proc.stderr[-1500:])
        return
    study = (
        request.getfixturevalue('study')
        if {'STUDY', 'ROOT'} & set(words) or words[:2] == ['vepd', 'report']
        else None
    )
    for w in words:
        if w.startswith('../shared/'):
            _need_shared(REPO / w)
    args, full = _substitute(words, tmp_path, study)
    at = next((j for j, w in enumerate(args) if j > 2 and w.startswith('--')), len(args))
    args[at:at] = SMALL.get(' '.join(words[:3]), [])  # after the README's own, before any --option
    env = {k: v for k, v in os.environ.items() if k != 'ROS_DOMAIN_ID'}
    proc = subprocess.run(
        _vepd(args[1:]), cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    said = f'{args}\nstdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-1500:]}'
    assert 'Traceback' not in proc.stderr, said
    if full:
        assert proc.returncode == 0, said  # written out in full: it must work as written
    if proc.returncode == 0:
        files = [p for p in tmp_path.rglob('*') if p.is_file()]
        assert proc.stdout.strip() or files, said  # exit 0 comes with output
        assert not re.search(r'\bnan\b', proc.stdout, re.IGNORECASE), said
    else:
        assert proc.stderr.strip().splitlines()[-1].startswith('vepd '), said

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test the options every command shares (vepd_ros.commands._args): --seed and --n-boot bounds.

A negative seed, a negative or unbounded --n-boot: argparse exit 2 naming the option and the
bound, before anything is read or written, in every command that takes them.
"""

from __future__ import annotations

import pytest
from test_evaluate_study import STUDY
from vepd_ros.cli import main as vepd


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

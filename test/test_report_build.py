# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""`vepd report DIR`: tables, figures, intervals and warnings land in Markdown and HTML."""

from __future__ import annotations

import json

from test_evaluate_study import STUDY
from vepd_ros.cli import main
from vepd_ros.cli import main as vepd
from vepd_ros.testing.synthetic_runs import write_synthetic_root


def test_report_on_authors_layout(tmp_path, capsys):
    root = write_synthetic_root(
        tmp_path / 'd', 'authors', k=3, duration_s=5.0, models=('chWalk_results', 'AirSim_results')
    )
    (root / 'Sim' / 'AirSim_results' / 'sine_3.csv').unlink()
    assert (
        main(['report', str(root), '--n-boot', '50', '--no-progress', '--overlay', 'circle:2'])
        == 0
    )
    out = root / 'report'
    md = (out / 'report.md').read_text()
    assert '**Table I**' in md and '**Table II**' in md and 'Ch:RW' in md and 'AirSim' in md
    assert 'fig3a_rmse.png' in md and 'fig4_circle_2.png' in md and 'K differs' in md
    for f in ('fig3a_rmse.png', 'fig3b_entropy.png', 'fig4_circle_2.png'):
        assert (out / f).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    page = (out / 'report.html').read_text()
    assert '<table>' in page and 'fig3b_entropy.png' in page and '95% interval' in page
    res = json.loads((out / 'result.json').read_text())
    assert res['models']['chWalk']['ci95'][0] <= res['models']['chWalk']['ci95'][1]
    assert (
        main(
            [
                'report',
                str(root),
                '--no-progress',
                '--n-boot',
                '0',
                '--overlay',
                'circle:9',
                '--out',
                str(tmp_path / 'o'),
            ]
        )
        == 0
    )
    assert 'overlay circle_9' in (tmp_path / 'o' / 'report.md').read_text()


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

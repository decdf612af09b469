"""The whole sim_judge graph over real DDS (vepd run, built-in judge) against the offline study.

Same seeds, same models, same message timing model: the graph's sensor inputs are bit-identical to the
study's (checked while building this), and the judge processes at the same nominal tick times. What still
differs is the scheduling of callbacks around run starts (which of navsat's and the judge's first callbacks
see which message first): on most runs E agrees within ~10 %, on some reference runs the start transient
differs and E is up to ~2x (a few cm/s). So the test states: the same K runs per batch, the same ranking,
W1 within 0.05 m/s + 20 % and W2 within 0.05 + 50 % of the study's value (the flatness difference S of a
noisy estimate moves more with that transient; over K = 2 runs W2 is a two-point distance: observed up
to 0.12 on ch_gauss's 0.28) — loose enough for the transient, tight enough that a wrong seed, model,
frame or velocity definition fails (ch_gauss vs ch_rw: W1 0.35 vs 0.002, W2 0.26 vs 0.002).
"""
import json
import subprocess
import sys

import pytest
from ros_helpers import ros_env

from vepd_ros.pipeline import run_study

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_sim_judge_graph_result_matches_the_offline_study(domain_id, tmp_path):
    args = dict(k=2, models='ch_gauss,ch_rw', scenarios='circle', duration_s=8.0, time_scale=4.0, seed=3)
    cmd = [sys.executable, '-m', 'vepd_ros.cli', 'run', 'sim_judge', *[f'{k}:={v}' for k, v in args.items()],
           f'output_dir:={tmp_path / "graph"}', 'judge:=builtin', '--json', '--timeout', '120']
    proc = subprocess.run(cmd, env=ros_env(domain_id), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    graph = json.loads(proc.stdout)
    study = run_study(['ch_gauss', 'ch_rw'], ['circle'], 2, 8.0, 'rtk', tmp_path / 'study', seed=3, workers=1)

    assert graph['k'] == study['k'] == {'real': {'circle': 2}, 'ch_gauss': {'circle': 2}, 'ch_rw': {'circle': 2}}
    for label in ('ch_gauss', 'ch_rw'):
        g, s = graph['models'][label], study['models'][label]
        assert abs(g['W1'] - s['W1']) <= 0.05 + 0.2 * s['W1'], (label, g['W1'], s['W1'])
        assert abs(g['W2'] - s['W2']) <= 0.05 + 0.5 * s['W2'], (label, g['W2'], s['W2'])
    assert graph['models']['ch_gauss']['VEPD'] > graph['models']['ch_rw']['VEPD']
    assert study['models']['ch_gauss']['VEPD'] > study['models']['ch_rw']['VEPD']
    written = sorted(p.relative_to(tmp_path / 'graph').as_posix() for p in (tmp_path / 'graph').rglob('circle_*.csv'))
    assert written == ['Real/circle_1.csv', 'Real/circle_2.csv', 'Sim/ch_gauss/circle_1.csv',
                       'Sim/ch_gauss/circle_2.csv', 'Sim/ch_rw/circle_1.csv', 'Sim/ch_rw/circle_2.csv']
    assert (tmp_path / 'graph' / 'result.json').is_file()

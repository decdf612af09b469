# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The tune report of a real, small, seeded ``vepd tune``: its page, its numbers and ``vepd report``.

One tune (Ch:RW+AirSim's walk σ and final HDOP against a simulated rtk reference, 10 trials of
3 runs × 8 s) feeds every test. The page is rendered by Debian's headless chromium (as
test_report_render does) and checked by what it shows: every figure loaded, the confirmation
table's numbers those of result.json. The landscape grid is evaluated with the tune's own
objective (``pipelines.tune.Objective``, the same seeds), so its node at the best trial must give
the best trial's VEPD bit for bit.
"""

from __future__ import annotations

import csv
import html
import json
import math
import shutil

import numpy as np
import pytest
from test_report_render import _chromium, CHROMIUM
from vepd_ros.cli import main
from vepd_ros.report.tune import (
    FIG_CONVERGENCE,
    FIG_IMPORTANCE,
    FIG_LANDSCAPE,
    LANDSCAPE_POINTS,
    write_tune_report,
)

pytestmark = pytest.mark.slow

MODEL = 'ch_rw+airsim'
PARAMS = 'rw_sigma,hdop_final=0.3:3'
SCENARIOS, RUNS, DURATION_S, SEED, TRIALS = 'straight', 3, 8.0, 3, 10

# After load: the images and every table's cells, written into the DOM for --dump-dom.
PROBE = """
<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src'), natural: i.naturalWidth,
    complete: i.complete}));
  const tables = [...document.querySelectorAll('table')].map(t => [...t.rows].map(
    r => [...r.cells].map(c => c.innerText)));
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({imgs, tables, text: document.body.innerText});
  document.body.appendChild(pre);
});
</script>
"""


@pytest.fixture(scope='module')
def tuned(tmp_path_factory):
    """Run the tune, which writes its report with the grid; return (tune dir, page folder)."""
    d = tmp_path_factory.mktemp('tune') / 'out'
    assert main(['tune', '--model', MODEL, '--params', PARAMS, '--reference', 'rtk',
                 '--scenarios', SCENARIOS, '--runs', str(RUNS), '--duration', str(DURATION_S),
                 '--trials', str(TRIALS), '--seed', str(SEED), '--quiet', '--out', str(d)]) == 0
    # vepd tune wrote the page with its own objective (the landscape test checks it is the
    # tuning objective: the best node reproduces the best trial's VEPD bit for bit)
    assert (d / 'report' / 'report.html').is_file()
    res = json.loads((d / 'result.json').read_text())
    assert res['trials_requested'] == TRIALS
    assert f'{TRIALS} trials completed of {TRIALS} asked' in (d / 'report' / 'report.md'
                                                              ).read_text()
    return d, d / 'report'


def _csv(path) -> list[dict]:
    with open(path, newline='') as fh:
        return list(csv.DictReader(fh))


def _probe(folder, tmp_path) -> dict:
    probe = folder / 'probe.html'
    probe.write_text((folder / 'report.html').read_text().replace('</body>', PROBE + '</body>'))
    dom = _chromium(tmp_path, '--virtual-time-budget=10000', '--dump-dom', probe.as_uri())
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    return json.loads(html.unescape(dom[start: dom.index('</pre>', start)]))


@pytest.mark.skipif(CHROMIUM is None,
                    reason='chromium not installed (apt-get install -y chromium)')
def test_page_renders_figures_and_the_confirmation_of_result_json(tuned, tmp_path):
    d, folder = tuned
    res = json.loads((d / 'result.json').read_text())
    seen = _probe(folder, tmp_path)
    # Every figure loaded (no broken image), and they are the three the page promises.
    assert sorted(i['src'] for i in seen['imgs']) == sorted(
        [FIG_CONVERGENCE, FIG_IMPORTANCE, FIG_LANDSCAPE])
    assert all(i['complete'] and i['natural'] > 0 for i in seen['imgs']), seen['imgs']
    text = seen['text']
    for phrase in ('Convergence', 'Parameter importance', 'PED-ANOVA', 'Landscape',
                   'Confirmation', 'Limits', 'lower is better'):
        assert phrase in text, phrase
    assert '**' not in text and '`' not in text  # Markdown rendered, none left literal
    # The confirmation table shows result.json's numbers (to the 4 decimals shown).
    table = next(t for t in seen['tables'] if t[0][0].startswith('fresh seeds'))
    assert f'seed {res["confirmation"]["seed"]}' in table[0][0]
    rows = {r[0].split(' (')[0]: r[1:] for r in table[1:]}
    assert set(rows) == {'tuned', 'untuned start'}
    for key, label in (('best', 'tuned'), ('start', 'untuned start')):
        c = res['confirmation'][key]
        vepd, ci, w1, w2 = rows[label]
        lo, hi = (float(x) for x in ci.strip('[]').split(','))
        for shown, value in ((vepd, c['VEPD']), (lo, c['ci95'][0]), (hi, c['ci95'][1]),
                             (w1, c['W1']), (w2, c['W2'])):
            assert abs(float(shown) - value) <= 0.5e-4 * (1 + 1e-9), (key, shown, value)
    assert f'tuned (best trial {res["best"]["number"]})' in table[1][0]
    # The study is complete and says how many trials it holds.
    assert f'{res["trials_complete"]} trials completed' in text
    assert 'Incomplete study' not in text


def test_landscape_grid_holds_the_best_trial_and_reproduces_its_vepd(tuned):
    d, folder = tuned
    res = json.loads((d / 'result.json').read_text())
    trials = {int(r['number']): r for r in _csv(d / 'trials.csv')}
    best = trials[res['best']['number']]
    axes = {a['name']: a for a in res['axes']}
    grid = _csv(folder / 'landscape.csv')
    shown = [k for k in grid[0] if k != 'vepd']
    assert sorted(shown) == sorted(axes) and len(grid) == LANDSCAPE_POINTS ** 2
    # The node at the best trial's values gives its VEPD exactly: common random numbers.
    at = [g for g in grid if all(float(g[k]) == float(best[k]) for k in shown)]
    assert len(at) == 1 and float(at[0]['vepd']) == float(best['vepd'])
    assert "The best trial's point reproduces its VEPD" in (folder / 'report.md').read_text()
    for k in shown:
        v = np.unique([float(g[k]) for g in grid])
        a = axes[k]
        assert len(v) == LANDSCAPE_POINTS and a['low'] <= v.min() and v.max() <= a['high']
        # Even steps in the axis's own scale (log10 on a log axis), but for the node moved onto
        # the best value.
        steps = np.diff(np.log10(v) if a['log'] else v)
        assert np.isclose(steps, np.median(steps), rtol=1e-6).sum() >= LANDSCAPE_POINTS - 3
    assert all(math.isfinite(float(g['vepd'])) for g in grid)


def test_importance_is_optunas_on_the_complete_trials(tuned):
    d, folder = tuned
    imp = _csv(folder / 'importance.csv')
    res = json.loads((d / 'result.json').read_text())
    assert sorted(r['parameter'] for r in imp) == sorted(a['name'] for a in res['axes'])
    assert math.isclose(sum(float(r['importance']) for r in imp), 1.0, rel_tol=1e-9)
    n = sum(r['state'] == 'COMPLETE' for r in _csv(d / 'trials.csv'))
    assert f'PED-ANOVA evaluator (PedAnovaImportanceEvaluator, target quantile 0.1) on the {n} ' \
        'scored trials' in (folder / 'report.md').read_text()
    # The landscape shows the two most important parameters, the most important on x.
    grid = _csv(folder / 'landscape.csv')
    assert [k for k in grid[0] if k != 'vepd'] == [r['parameter'] for r in imp][:2]


def test_same_files_same_page(tuned, tmp_path):
    d, _ = tuned
    a = write_tune_report(d, tmp_path / 'a').parent
    b = write_tune_report(d, tmp_path / 'b').parent
    for name in ('report.md', 'report.html', 'importance.csv'):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # Without an objective: the trials' points, said so, and no grid file.
    assert 'No objective was given' in (a / 'report.md').read_text()
    assert not (a / 'landscape.csv').exists()


def test_short_and_failed_study_is_flagged(tuned, tmp_path):
    d, _ = tuned
    short = tmp_path / 'short'
    shutil.copytree(d, short, ignore=shutil.ignore_patterns('report'))
    res = json.loads((short / 'result.json').read_text())
    rows = _csv(short / 'trials.csv')
    # One trial that is not the best marked failed (as Optuna writes it), one more asked.
    victim = next(r for r in rows if int(r['number']) != res['best']['number'])
    victim.update(state='FAIL', vepd='')
    with open(short / 'trials.csv', 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator='\n')
        w.writeheader()
        w.writerows(rows)
    n_done = TRIALS - 1
    res.update(trials_complete=n_done, trials_requested=TRIALS + 1)
    (short / 'result.json').write_text(json.dumps(res))
    md = (write_tune_report(short).with_name('report.md')).read_text()
    assert (f'**Incomplete study** — {n_done} of {TRIALS + 1} trials asked completed; '
            '1 failed') in md
    assert 'trials failed, pruned or unfinished (1)' in md
    assert f'on the {n_done} scored trials' in md


def test_vepd_report_on_a_tune_dir_and_on_neither(tuned, tmp_path, capsys):
    d, _ = tuned
    tune = tmp_path / 'tune'
    shutil.copytree(d, tune, ignore=shutil.ignore_patterns('report'))
    assert main(['report', str(tune), '--quiet']) == 0
    assert (tune / 'report' / 'report.html').is_file()
    assert (tune / 'report' / FIG_CONVERGENCE).is_file()
    # Again: the previous report is replaced, not refused.
    assert main(['report', str(tune), '--quiet']) == 0
    capsys.readouterr()
    # A study option on a tune output is refused, naming it.
    assert main(['report', str(tune), '--overlay', 'circle:1']) == 2
    assert '--overlay' in capsys.readouterr().err
    # Neither a study nor a tune output: exit 2, both named, nothing written into it.
    other = tmp_path / 'other'
    other.mkdir()
    (other / 'result.json').write_text('{"models": {}}')
    assert main(['report', str(other)]) == 2
    err = capsys.readouterr().err
    assert 'no Real/ folder' in err and 'vepd tune' in err and 'Traceback' not in err
    assert sorted(p.name for p in other.iterdir()) == ['result.json']
    # A tune output missing its trials: the file named, exit 2.
    (tune / 'trials.csv').unlink()
    assert main(['report', str(tune), '--quiet']) == 2
    assert 'trials.csv' in capsys.readouterr().err


def test_known_parameters_row_and_a_bad_result_field(tuned, tmp_path, capsys):
    d, _ = tuned
    known = tmp_path / 'known'
    shutil.copytree(d, known, ignore=shutil.ignore_patterns('report'))
    res = json.loads((known / 'result.json').read_text())
    # A reference simulated with known parameters: its fresh-seed entry is a third row. Numbers
    # set apart from the tuned interval, so the page must say which side they fall on.
    tuned_ci = res['confirmation']['best']['ci95']
    res['confirmation']['known'] = {'VEPD': tuned_ci[0] / 2, 'W1': 0.01, 'W2': 0.02,
                                    'ci95': [tuned_ci[0] / 3, tuned_ci[0] / 1.5], 'warnings': []}
    (known / 'result.json').write_text(json.dumps(res))
    md = write_tune_report(known).with_name('report.md').read_text()
    row = next(line for line in md.splitlines() if line.startswith('| known parameters'))
    shown = [f'{tuned_ci[0] / 2:.4f}', f'[{tuned_ci[0] / 3:.4f}, {tuned_ci[0] / 1.5:.4f}]']
    assert row.split(' | ')[1:3] == shown
    assert 'below the tuned interval: the search did not converge' in md
    # A field of result.json that is not what vepd tune writes: exit 2, the field named.
    del res['confirmation']['known']['W2']
    (known / 'result.json').write_text(json.dumps(res))
    assert main(['report', str(known), '--quiet']) == 2
    err = capsys.readouterr().err
    assert 'confirmation.known' in err and "'W2'" in err and 'Traceback' not in err

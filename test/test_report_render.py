# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Check the HTML report as a person sees it, rendered by a real headless browser.

The HTML report as a person sees it: rendered by a real headless browser (Debian's chromium),
checked by what the page shows — the laid-out DOM after load (image natural vs displayed widths,
caption text, rendered emphasis) and pixels of screenshots of the page and of a figure — not only
by the HTML text.

Skipped, with the reason, when chromium is not installed (`apt-get install -y chromium`; .ci/run
does it). Set VEPD_KEEP_SCREENSHOTS=DIR to keep the screenshots (page.png, figure.png) for a person
to look at.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import subprocess

import numpy as np
import pytest
from vepd_ros.cli import main

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason='chromium not installed (apt-get install -y chromium)'
    ),
]

WINDOW = (1280, 900)

# Runs after load, measures the laid-out page, writes the measurements into the DOM for --dump-dom.
PROBE = """
<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src'), natural: i.naturalWidth,
    shown: i.getBoundingClientRect().width, complete: i.complete}));
  const caps = [...document.querySelectorAll('figcaption')].map(c => ({text: c.innerText,
    visible: c.getBoundingClientRect().height > 0}));
  const out = {imgs, caps, text: document.body.innerText, viewport: window.innerWidth,
    strong: [...document.querySelectorAll('strong')].map(s => s.innerText),
    tables: document.querySelectorAll('table').length};
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def _chromium(tmp_path, *args, timeout=120):
    """One headless chromium call with a fresh, empty profile; returns stdout."""
    profile = tmp_path / f'profile{len(list(tmp_path.glob("profile*")))}'
    profile.mkdir()
    cmd = [
        CHROMIUM,
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--hide-scrollbars',
        f'--user-data-dir={profile}',
        f'--window-size={WINDOW[0]},{WINDOW[1]}',
        *args,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    """
    Run a real study and write its report.

    A real study (simulated rtk reference, five models, K = 3: the K warning must show) and its
    report.
    """
    root = tmp_path_factory.mktemp('render') / 'study'
    assert (
        main(
            [
                'study',
                '--scenarios',
                'straight,circle,sine',
                '--runs',
                '3',
                '--duration',
                '8',
                '--reference',
                'rtk',
                '--seed',
                '1',
                '--n-boot',
                '200',
                '--quiet',
                '--out',
                str(root),
            ]
        )
        == 0
    )
    assert main(['report', str(root), '--quiet', '--n-boot', '200']) == 0
    return root / 'report'


def _probe(report, tmp_path):
    page = (report / 'report.html').read_text()
    probe = report / 'probe.html'
    probe.write_text(page.replace('</body>', PROBE + '</body>'))
    dom = _chromium(tmp_path, '--virtual-time-budget=10000', '--dump-dom', probe.as_uri())
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    import html

    return json.loads(html.unescape(dom[start: dom.index('</pre>', start)]))


def test_page_shows_captions_emphasis_and_legible_figures(report, tmp_path):
    seen = _probe(report, tmp_path)
    text = seen['text']
    # Captions and notes of the Markdown, with the emphasis rendered (no literal Markdown left).
    for phrase in (
        'Table I',
        'Table II',
        'lower is better',
        'W1 in m/s',
        'Reading VEPD',
        'Fig. 3a',
        'Fig. 3b',
        'Fig. 4, run',
        'simulated reference (rtk)',
        'Closest to',
        'K = 3',
    ):
        assert phrase in text, phrase
    assert '**' not in text and '`' not in text
    assert 'speed' in seen['strong'] and 'lower is better' in seen['strong']
    assert seen['tables'] == 4
    caps = [c for c in seen['caps'] if c['text'].startswith('Fig.')]
    assert len(caps) == 2 + 3 and all(c['visible'] for c in caps)
    assert all(any(u in c['text'] for u in ('m/s', 'unitless', "run's E")) for c in caps)
    # Every figure loaded and is shown at (nearly) its own width: a 3-column grid, not a strip.
    assert len(seen['imgs']) == 5
    for im in seen['imgs']:
        assert im['complete'] and im['natural'] > 0, im
        assert im['shown'] <= seen['viewport']
        assert im['shown'] / im['natural'] >= 0.85, im


def _png(path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert('RGB')).astype(int)


def test_screenshots_of_the_page_and_a_figure(report, tmp_path):
    page_png, fig_png = tmp_path / 'page.png', tmp_path / 'figure.png'
    _chromium(
        tmp_path,
        '--virtual-time-budget=10000',
        f'--screenshot={page_png}',
        (report / 'report.html').as_uri(),
    )
    # The first Fig. 4 grid as the page lays it out: the same page and style, the rest hidden
    # (headless screenshots ignore a scroll to #fragment).
    fig4 = sorted(report.glob('fig4_*.png'))[0].stem
    only = report / 'figure_only.html'
    only.write_text(
        (report / 'report.html')
        .read_text()
        .replace('</head>', f'<style>body > *:not(#{fig4}){{display:none}}</style></head>')
    )
    _chromium(tmp_path, '--virtual-time-budget=10000', f'--screenshot={fig_png}', only.as_uri())
    keep = os.environ.get('VEPD_KEEP_SCREENSHOTS')
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(page_png, Path(keep) / 'page.png')
        shutil.copy(fig_png, Path(keep) / 'figure.png')
    page, fig = _png(page_png), _png(fig_png)
    assert page.shape[:2] == (WINDOW[1], WINDOW[0]) and fig.shape[:2] == (WINDOW[1], WINDOW[0])
    dark = page.sum(axis=2) < 200
    assert dark[:120].mean() > 0.005  # the title and first lines drawn in the top strip
    assert dark.mean() > 0.01  # text and tables, not a blank page
    # The figure fills the viewport with drawn panels: non-white area, and its two curves' colours
    # (truth dark grey, estimate matplotlib orange C1 = (255, 127, 14)).
    nonwhite = np.abs(fig - 255).sum(axis=2) > 30
    assert nonwhite.mean() > 0.05
    orange = np.abs(fig - np.array([255, 127, 14])).sum(axis=2) < 60
    assert orange.sum() > 500
    cols = nonwhite.any(axis=0)
    assert (
        cols[: WINDOW[0] // 3].any()
        and cols[WINDOW[0] // 3: 2 * WINDOW[0] // 3].any()
        and cols[2 * WINDOW[0] // 3:].any()
    )  # three columns of panels across the page

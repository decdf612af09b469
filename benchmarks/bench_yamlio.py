# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Benchmark ``yamlio.load_yaml`` on a large document: libyaml against the pure-Python loader.

A YAML file of ~0.7 MB (57 k values, the size at which issue 24 saw loads take over a minute on
a busy machine). Target: the load bounded by the caps — under 2 CPU seconds per MB with libyaml.
Prints CPU seconds of ``load_yaml`` (libyaml, depth pre-check and alias count included) and of the
pure-Python loader with the same resolvers, the ratio pure / libyaml (> 1: libyaml faster), and the
time of the largest file the cap allows (``MAX_BYTES``), extrapolated.

    .venv/bin/python benchmarks/bench_yamlio.py [--kb 700] [--repeat 3]
"""

from __future__ import annotations

import argparse
from pathlib import Path
import random
import statistics
import tempfile
import time

from vepd_ros import yamlio
import yaml


def document(n_bytes: int) -> str:
    rng = random.Random(1)
    lines, i = ['key:'], 0
    while sum(map(len, lines)) < n_bytes:
        lines.append(f'  - [{rng.random()}, {rng.randint(0, 1000)}, x{i}]')
        i += 1
    return '\n'.join(lines) + '\n'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--kb', type=int, default=700)
    ap.add_argument('--repeat', type=int, default=3)
    a = ap.parse_args()
    text = document(a.kb * 1000)

    class Pure(yaml.SafeLoader):
        pass

    Pure.yaml_implicit_resolvers = yamlio._Loader.yaml_implicit_resolvers
    Pure.yaml_constructors = yamlio._Loader.yaml_constructors
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / 'big.yaml'
        f.write_text(text)
        fast, slow = [], []
        for _ in range(a.repeat):
            t = time.process_time()
            fast_doc = yamlio.load_yaml(f, what='benchmark')
            fast.append(time.process_time() - t)
            t = time.process_time()
            slow_doc = yaml.load(text, Loader=Pure)
            slow.append(time.process_time() - t)
        assert repr(fast_doc) == repr(slow_doc)
    mb = len(text) / 1e6
    c, p = statistics.median(fast), statistics.median(slow)
    print(f'{mb:.2f} MB: load_yaml (libyaml={yamlio._C}) {c:.3f} CPU s ({c / mb:.2f} s/MB), '
          f'pure-Python loader {p:.3f} CPU s; pure / libyaml {p / c:.2f}x; the cap '
          f'({yamlio.MAX_BYTES / 1e6:.0f} MB) extrapolates to '
          f'{c / mb * yamlio.MAX_BYTES / 1e6:.1f} CPU s')


if __name__ == '__main__':
    main()

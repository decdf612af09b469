#!/usr/bin/env python3

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Golden data from robot_localization's own filter core, in the rl_golden layout.

    python3 tools/rl_golden/rl_golden.py build
    python3 tools/rl_golden/rl_golden.py run SCENARIO_DIR [OUT_DIR]
    python3 tools/rl_golden/rl_golden.py compare GOLDEN_DIR OTHER_DIR

``build`` compiles the driver (``build.sh``: upstream ekf.cpp / ukf.cpp / filter_base.cpp /
filter_utilities.cpp, unmodified, from ../shared/ros2_sources; cached under
``${XDG_CACHE_HOME:-~/.cache}/vepd_ros/rl_golden``) and prints its path.

``run`` reads SCENARIO_DIR/scenario.json (``ros_parameters``, ``emulation``) and
SCENARIO_DIR/measurements.csv.gz (the prepared 15-vector measurements) and writes
``golden_updates.csv.gz``, ``golden_ticks.csv`` and ``golden_full_covariance.csv`` to OUT_DIR
(default SCENARIO_DIR) exactly as ../shared/data/rl_golden/README.md defines them. The node loop is
emulated by the driver (driver.cpp). The optional top-level ``filter`` object picks the core:
``{"kind": "ekf"}`` (default) or ``{"kind": "ukf", "alpha": .., "kappa": .., "beta": ..}``.
Besides the README's diagonal ``r_<STATE>``
columns, measurements.csv.gz may hold off-diagonal covariance entries as ``r_<A>_<B>`` (symmetric).

``compare`` prints the largest deviation of OTHER_DIR's golden files from GOLDEN_DIR's (state
absolute, P diagonal relative, full P relative) and whether ids, stamps and flags are identical.
Exit status: 0 done, 2 bad input or a failed driver, 77 driver cannot be built here (reason
printed).
"""

import csv
import gzip
import io
import json
import math
from pathlib import Path
import subprocess
import sys
import tempfile

HERE = Path(__file__).resolve().parent
STATES = ('X', 'Y', 'Z', 'ROLL', 'PITCH', 'YAW', 'VX', 'VY', 'VZ', 'VROLL', 'VPITCH', 'VYAW',
          'AX', 'AY', 'AZ')
N = len(STATES)
FULL_COVARIANCE_EVERY = 30
SKIPPED = 77


class BadInput(Exception):
    """Input that cannot be turned into a golden run (message names the file and field)."""


def build() -> Path:
    """Build (or reuse) the driver; its path. SystemExit(77) with the reason when impossible."""
    proc = subprocess.run(['bash', str(HERE / 'build.sh')], stdout=subprocess.PIPE, text=True)
    if proc.returncode == SKIPPED:
        raise SystemExit(SKIPPED)
    if proc.returncode != 0:
        raise BadInput(f'build.sh failed with exit status {proc.returncode}')
    return Path(proc.stdout.strip().splitlines()[-1])


def _matrix(value, name: str, where: str) -> list:
    """Return a 15 (diagonal) or 225 (row-major) entry list as 225 floats."""
    if not isinstance(value, list) or len(value) not in (N, N * N):
        raise BadInput(f'{where}: ros_parameters.{name} must be a list of {N} or {N * N} numbers')
    v = [float(x) for x in value]
    if len(v) == N * N:
        return v
    return [v[i] if i == j else 0.0 for i in range(N) for j in range(N)]


def _setup_text(scenario: dict, where: str) -> str:
    ros = scenario.get('ros_parameters')
    em = scenario.get('emulation')
    if not isinstance(ros, dict) or not isinstance(em, dict):
        raise BadInput(f'{where}: needs the objects ros_parameters and emulation')
    kind = scenario.get('filter', {'kind': 'ekf'})
    if not isinstance(kind, dict) or kind.get('kind') not in ('ekf', 'ukf'):
        raise BadInput(f'{where}: filter must be {{"kind": "ekf"}} or {{"kind": "ukf", "alpha": '
                       '.., "kappa": .., "beta": ..}}')
    lines = [f'filter {kind["kind"]}']
    for key in ('alpha', 'kappa', 'beta'):
        if kind.get(key) is not None:
            lines.append(f'ukf_{key} {float(kind[key])!r}')
    for key in ('first_tick_ns', 'tick_period_ns', 'n_ticks', 'sensor_timeout_ns',
                'initial_last_measurement_time_ns'):
        if not isinstance(em.get(key), int):
            raise BadInput(f'{where}: emulation.{key} must be an integer')
        lines.append(f'{key} {em[key]}')
    lines.append(f'dynamic_process_noise {int(bool(ros.get("dynamic_process_noise_covariance")))}')
    lines.append(f'full_covariance_every {FULL_COVARIANCE_EVERY}')
    for key, name in (('process_noise', 'process_noise_covariance'),
                      ('initial_covariance', 'initial_estimate_covariance')):
        lines.append(key + ' ' + ' '.join(map(repr, _matrix(ros.get(name), name, where))))
    x0 = ros.get('initial_state') or [0.0] * N
    if len(x0) != N:
        raise BadInput(f'{where}: ros_parameters.initial_state must have {N} numbers')
    lines.append('initial_state ' + ' '.join(repr(float(v)) for v in x0))
    return '\n'.join(lines) + '\n'


def _float(text: str) -> float:
    return math.nan if text == '' else float(text)


def _measurement_lines(path: Path) -> str:
    """measurements.csv.gz rows as the driver's whitespace-separated lines."""
    with gzip.open(path, 'rt', newline='') as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise BadInput(f'{path}: no measurements')
    off = [(c, c[2:].split('_')) for c in rows[0] if c.startswith('r_') and c.count('_') == 2]
    out = []
    for line, r in enumerate(rows, start=2):
        try:
            R = [[0.0] * N for _ in range(N)]
            for i, s in enumerate(STATES):
                R[i][i] = _float(r[f'r_{s}'])
            for col, (a, b) in off:
                v = _float(r[col])
                if not math.isnan(v):
                    R[STATES.index(a)][STATES.index(b)] = R[STATES.index(b)][STATES.index(a)] = v
            thr = r['rejection_threshold']
            fields = [r['id'], r['topic'], r['stamp_ns'], r['arrival_ns'],
                      'max' if thr == '' else repr(float(thr))]
            fields += [str(int(r[f'u_{s}'])) for s in STATES]
            fields += [repr(_float(r[f'z_{s}'])) for s in STATES]
            fields += [repr(v) for row in R for v in row]
        except (KeyError, ValueError) as exc:
            raise BadInput(f'{path}, line {line}: {exc!r} (rl_golden measurements layout)')
        out.append(' '.join(fields))
    return '\n'.join(out) + '\n'


def run(scenario_dir: Path, out_dir: Path, driver: Path | None = None) -> None:
    """Run the upstream core on a scenario and write its golden files to out_dir."""
    where = scenario_dir / 'scenario.json'
    try:
        scenario = json.loads(where.read_text())
    except (OSError, ValueError) as exc:
        raise BadInput(f'{where}: {exc}')
    setup = _setup_text(scenario, str(where))
    measurements = _measurement_lines(scenario_dir / 'measurements.csv.gz')
    driver = driver or build()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / 'setup.txt').write_text(setup)
        (tmp / 'measurements.txt').write_text(measurements)
        proc = subprocess.run([str(driver), str(tmp / 'setup.txt'), str(tmp / 'measurements.txt'),
                               str(tmp)], stderr=subprocess.PIPE, text=True)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            raise BadInput(f'driver failed with exit status {proc.returncode}')
        # CRLF line ends, as Python's csv writer (and so the shipped rl_golden files) has them.
        text = {n: (tmp / n).read_bytes().replace(b'\n', b'\r\n')
                for n in ('updates.csv', 'ticks.csv', 'full_covariance.csv')}
    with open(out_dir / 'golden_updates.csv.gz', 'wb') as f:
        with gzip.GzipFile(filename='', fileobj=f, mode='wb', mtime=0) as gz:
            gz.write(text['updates.csv'])
    (out_dir / 'golden_ticks.csv').write_bytes(text['ticks.csv'])
    (out_dir / 'golden_full_covariance.csv').write_bytes(text['full_covariance.csv'])


def _read(path: Path) -> list:
    data = path.read_bytes()
    if path.suffix == '.gz':
        data = gzip.decompress(data)
    return list(csv.DictReader(io.StringIO(data.decode())))


def _rel(a: float, b: float) -> float:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    return abs(a - b) / max(abs(a), 1e-300)


def compare(golden: Path, other: Path) -> dict:
    """Largest deviations of other's golden files from golden's (identical keys required)."""
    out = {}
    files = (
        ('golden_updates.csv.gz', ('id', 'tick_ns', 'status', 'last_measurement_time_ns')),
        ('golden_ticks.csv', ('tick_ns', 'stamp_ns', 'timeout_predict')),
        ('golden_full_covariance.csv', ('tick_ns',)),
    )
    for name, keys in files:
        a, b = _read(golden / name), _read(other / name)
        same = len(a) == len(b) and all(
            int(ra[k]) == int(rb[k]) for ra, rb in zip(a, b) for k in keys)
        dx = dp = 0.0
        for ra, rb in zip(a, b):
            for col in ra:
                if col in keys:
                    continue
                va, vb = float(ra[col]), float(rb[col])
                if col.startswith('x_'):
                    dx = max(dx, 0.0 if va == vb else abs(va - vb))
                else:
                    dp = max(dp, _rel(va, vb))
        out[name] = {'rows': (len(a), len(b)), 'keys_identical': same,
                     'max_abs_state': dx, 'max_rel_P': dp}
    return out


def main(argv=None) -> int:
    """Command line (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ['build'] and len(argv) == 1:
            print(build())
        elif argv[:1] == ['run'] and len(argv) in (2, 3):
            run(Path(argv[1]), Path(argv[-1]))
        elif argv[:1] == ['compare'] and len(argv) == 3:
            res = compare(Path(argv[1]), Path(argv[2]))
            for name, r in res.items():
                print(f'{name}: rows {r["rows"][0]}/{r["rows"][1]}, ids/stamps/flags identical '
                      f'{r["keys_identical"]}, max |dx| {r["max_abs_state"]:.3g}, '
                      f'max rel dP {r["max_rel_P"]:.3g}')
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except BadInput as exc:
        print(f'rl_golden: {exc}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Replay rl_golden scenarios through the built-in judge and compare with the golden ticks.

Run an rl_golden scenario directory (scenario.json, raw_*.csv, golden_ticks.csv) from its RAW
messages through the message layer and the node-loop emulation, and compare with the golden ticks.

Tolerances (rl_golden README): state atol 1e-9 (1e-8 on positions), P relative 1e-9, identical
stamps and tick rows.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import gzip
from pathlib import Path

import numpy as np
from vepd_ros.csvio import check_row_lengths, nonblank_rows
from vepd_ros.judge.config import load_ekf_params
from vepd_ros.judge.ekf import STATE_NAMES
from vepd_ros.judge.filter import run_schedule, ScheduleResult, ticks_for
from vepd_ros.judge.measurements import MeasurementBuilder
from vepd_ros.yamlio import quote

ATOL_STATE = 1e-9
ATOL_POSITION = 1e-8
RTOL_P = 1e-9


def read_csv(path: Path) -> dict:
    """
    Read a CSV file into numpy columns.

    CSV → {column: numpy array}; integer columns (``*_ns``, ``seq``, ``id``) as int64, text kept.
    """
    opener = gzip.open if str(path).endswith('.gz') else open
    try:
        with opener(path, 'rt', newline='', encoding='utf-8') as f:
            rows, line_of = nonblank_rows(f)
    except (UnicodeDecodeError, OSError, EOFError, csv.Error) as exc:
        raise ValueError(f'{path}: not a readable CSV file ({str(exc)[:120]})') from None
    if not rows or any('\x00' in c for c in rows[0]):
        raise ValueError(f'{path}: empty or binary; expected a CSV file with a header row')
    check_row_lengths(path, rows, line_of)
    head, body = rows[0], rows[1:]
    out = {}
    for j, name in enumerate(head):
        col = [r[j] for r in body]
        if name.endswith('_ns') or name in ('seq', 'id', 'status', 'timeout_predict'):
            try:
                out[name] = np.array([int(v) for v in col], np.int64)
            except (ValueError, OverflowError):
                bad = next(i for i, v in enumerate(col) if not _is_int64(v))
                raise ValueError(
                    f'{path}, line {line_of[bad + 1]}, column {quote(name, 40)}: '
                    f'{quote(col[bad], 40)} is not a 64-bit integer'
                ) from None
        else:
            try:
                out[name] = np.array([float(v) if v != '' else np.nan for v in col])
            except ValueError:
                out[name] = np.array(col, dtype=object)
    return out


def _is_int64(v: str) -> bool:
    try:
        return -(2**63) <= int(v) < 2**63
    except ValueError:
        return False


def scenario_params(scenario: dict, where: str = 'scenario.json'):
    """
    Return the EkfParams of a golden scenario's ``ros_parameters``.

    ``ros_parameters`` must be a mapping (ValueError naming ``where`` and the field otherwise).
    """
    ros = _field(scenario, 'ros_parameters', dict, where)
    return load_ekf_params({k: v for k, v in ros.items() if v is not None})


def _field(doc, name: str, kind, where: str):
    if not isinstance(doc, dict):
        raise ValueError(
            f'{where}: expected a JSON object at the top level, got {type(doc).__name__}'
        )
    v = doc.get(name)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise ValueError(
            f'{where}: field {name!r} must be {getattr(kind, "__name__", kind)}, got {quote(v)}'
        )
    return v


def _cols(d, names, n):
    return np.stack([d[c] if c in d else np.zeros(n) for c in names], axis=-1)


def build_series(params, directory: Path) -> list:
    """
    Build the MeasurementSeries of a scenario's raw CSV files.

    raw_<sensor>.csv (or .csv.gz) files → MeasurementSeries in delivery order (messages sorted by
    arrival).
    """
    b = MeasurementBuilder(params)
    series = []
    for s in params.sensors:
        path = directory / f'raw_{s.name}.csv'
        if not path.exists():
            path = path.with_name(path.name + '.gz')  # gzipped (test/data keeps them small)
            if not path.exists():
                continue
        d = read_csv(path)
        for c in ('seq', 'arrival_ns', 'stamp_ns'):
            if c not in d:
                raise ValueError(f'{path}: no {c} column (expected the rl_golden raw CSV layout)')
        if d['stamp_ns'].size == 0:
            raise ValueError(f'{path}: a header and no messages')
        order = np.lexsort((d['seq'], d['arrival_ns']))
        d = {k: v[order] for k, v in d.items()}
        n = d['stamp_ns'].size
        frame = str(d['frame_id'][0]) if 'frame_id' in d else ''
        if s.kind == 'imu':
            series += b.imu_arrays(
                s,
                d['stamp_ns'],
                _cols(d, ['qx', 'qy', 'qz', 'qw'], n),
                _cols(d, ['wx', 'wy', 'wz'], n),
                _cols(d, ['ax', 'ay', 'az'], n),
                _cols(d, [f'ocov{i}' for i in range(9)], n),
                _cols(d, [f'wcov{i}' for i in range(9)], n),
                _cols(d, [f'acov{i}' for i in range(9)], n),
                frame_id=frame,
                arrivals=d['arrival_ns'],
            )
        elif s.kind == 'odom':
            q = _cols(d, ['qx', 'qy', 'qz', 'qw'], n)
            if 'qw' not in d:
                q[:, 3] = 1.0
            child = (
                str(d['child_frame_id'][0]) if 'child_frame_id' in d else params.base_link_frame
            )
            series += b.odometry_arrays(
                s,
                d['stamp_ns'],
                _cols(d, ['x', 'y', 'z'], n),
                q,
                _cols(d, [f'pcov{i}' for i in range(36)], n),
                _cols(d, ['vx', 'vy', 'vz'], n),
                _cols(d, ['wx', 'wy', 'wz'], n),
                _cols(d, [f'tcov{i}' for i in range(36)], n),
                frame_id=frame,
                child_frame_id=child,
                arrivals=d['arrival_ns'],
            )
        else:
            raise ValueError(f'{path}: sensor kind {s.kind!r} not supported by the golden runner')
    return series


@dataclass
class GoldenReport:
    max_abs_dev: dict  # state name -> max |Δx|
    max_rel_dev_P: dict  # state name -> max |ΔP_ii| / |P_ii|
    rows_match: bool
    stamps_match: bool
    n_ticks: int
    ok: bool
    result: ScheduleResult

    @property
    def max_abs(self) -> float:
        return max(self.max_abs_dev.values()) if self.max_abs_dev else float('inf')


def run_scenario(directory, full_covariance: bool = False) -> GoldenReport:
    directory = Path(directory)
    from vepd_ros.fileio import load_json

    scenario = load_json(directory / 'scenario.json', what='golden scenario')
    where = str(directory / 'scenario.json')
    params = scenario_params(scenario, where)
    em = _field(scenario, 'emulation', dict, where)
    for key in ('tick_period_ns', 'first_tick_ns', 'n_ticks'):
        v = _field(em, key, int, f'{where}: emulation')
        if not -(2**63) <= v < 2**63:
            raise ValueError(f'{where}: emulation.{key} {quote(v)} is not a 64-bit integer')
    if not 0 <= em['n_ticks'] <= 50_000_000:
        raise ValueError(f'{where}: emulation.n_ticks {em["n_ticks"]} out of [0, 50000000]')
    if int(em['tick_period_ns']) != params.period_ns:
        raise ValueError(
            f'{directory}: tick_period_ns {em["tick_period_ns"]} != period from frequency '
            f'{params.period_ns}'
        )
    series = build_series(params, directory)
    res = run_schedule(
        params,
        series,
        ticks_for(params, em['first_tick_ns'], em['n_ticks']),
        full_covariance=full_covariance,
    )
    g = read_csv(directory / 'golden_ticks.csv')
    rows_match = res.tick_ns.size == g['tick_ns'].size and bool(
        np.all(res.tick_ns == g['tick_ns'])
    )
    n = min(res.tick_ns.size, g['tick_ns'].size)
    stamps_match = (
        rows_match
        and bool(np.all(res.stamp_ns[:n] == g['stamp_ns'][:n]))
        and bool(np.all(res.timeout_predict[:n] == g['timeout_predict'][:n].astype(bool)))
    )
    x = res.x[0, :n]
    Pd = res.P[0, :n] if not full_covariance else res.P[0, :n][:, np.arange(15), np.arange(15)]
    dev, rdev, ok = {}, {}, rows_match and stamps_match
    for i, name in enumerate(STATE_NAMES):
        gx, gp = g[f'x_{name}'][:n], g[f'p_{name}'][:n]
        dev[name] = float(np.max(np.abs(x[:, i] - gx))) if n else float('inf')
        scale = np.maximum(np.abs(gp), 1e-300)
        rdev[name] = float(np.max(np.abs(Pd[:, i] - gp) / scale)) if n else float('inf')
        tol = ATOL_POSITION if i < 3 else ATOL_STATE
        ok = (
            ok
            and dev[name] <= tol
            and (rdev[name] <= RTOL_P or float(np.max(np.abs(Pd[:, i] - gp))) == 0.0)
        )
    return GoldenReport(dev, rdev, rows_match, stamps_match, n, ok, res)

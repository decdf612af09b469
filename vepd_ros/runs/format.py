# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
One run on disk: the paper's CSV plus a JSON sidecar (design.md §5).

CSV columns, in this order:

    se_time, gt_time, se_vel, gt_vel        the authors' four columns, first and exact
    se_vx, se_vy, gt_vx, gt_vy              ours only: body-frame (FLU) planar velocity components

``*_time`` are seconds from the run start, ``*_vel`` the horizontal speed (m/s), ``*_vx/vy`` the
velocity in the vehicle's body frame (x forward, y left; REP-103). The estimate (se_*) and truth
(gt_*) streams have their own stamps and lengths; the shorter stream's columns are padded to the
longer one's length with EMPTY cells (``padding='empty'``, the default: a plot of the file shows no
false drop to 0 m/s), or with 0.0 as in the authors' files (``padding='zero'``, for their scripts).
Floats are written with Python's shortest round-trip repr, so a value read back is bit-identical.

Sidecar ``<scenario>_<j>.json``: ``format``, ``columns``, ``se_len`` and ``gt_len`` (the true
lengths, so padding is unambiguous), and whatever the writer knows — side, label, model, scenario,
j, seed, source topics, message counts, dropped counts, parameters.

Reading a file without a sidecar (the authors' files): only TRAILING padding of a column pair is
removed — rows at the tail where time and value are both exactly 0.0 (time not increasing there) or
both empty. A true zero speed anywhere keeps its row (the authors' reader dropped every 0.0 in
gt_time and gt_vel independently; that bug is not reproduced). Extra columns such as a pandas index
are ignored; columns are found by name. A sidecar's ``se_len``/``gt_len`` rows are the run; the
rows after them must be padding, 0.0 or empty (both our older zero-padded files and the current
ones read).

Refused with a ``RunFileError`` naming the file (and row/column): a file that is not UTF-8 text,
duplicate column names, a cell that is not a plain decimal number (Python's ``float`` would take
``1_0`` or other digit scripts; we do not), NaN/inf inside a run, a magnitude beyond
``MAX_ABS_TIME_S`` (stamps) or ``MAX_ABS_VELOCITY_MPS`` (velocities) — so 1e308 never reaches the
metric —, stamps that do not strictly increase (constant or repeated ``se_time``/``gt_time``), a
sidecar that is not a JSON object or whose ``se_len``/``gt_len`` is not an integer within the file.
Error messages quote at most ~80 characters of what the file holds.
"""

from __future__ import annotations

import json
from pathlib import Path
import re
from typing import Any

import numpy as np
from vepd_ros.csvio import NUMBER_RE
from vepd_ros.fileio import atomic_write_many, load_json, RunFileError
from vepd_ros.metrics.records import COMPONENT_FIELDS, RunRecord
from vepd_ros.yamlio import quote

FORMAT = 'vepd_ros.run/1'
PAPER_COLUMNS = ('se_time', 'gt_time', 'se_vel', 'gt_vel')
EXTRA_COLUMNS = COMPONENT_FIELDS  # the CSV columns are named after the record's fields
PADDINGS = ('empty', 'zero')
MAX_ABS_TIME_S = 1e5
"""Largest |stamp| of a run file, s (27.8 h from the run start): bounds the metric's 15 Hz grid."""
MAX_ABS_VELOCITY_MPS = 1e4
"""Largest |velocity| of a run file, m/s: a number beyond it is a corrupt file, not a vehicle."""
_OTHER_CHAR_RE = re.compile(r'[^0-9eE+\-.,\n]')


def _fill_empty_cells(text: str) -> str:
    """
    Fill every empty cell of CSV ``text`` with 'nan'.

    ``text`` (rows joined by newlines) with every empty cell written 'nan' (str.replace: C
    speed; two passes of ',,' cover any run of empty cells).
    """
    s = '\n' + text + '\n'
    for a, b in ((',,', ',nan,'), (',,', ',nan,'), ('\n,', '\nnan,'), (',\n', ',nan\n')):
        if a in s:  # most files have none of some patterns
            s = s.replace(a, b)
    return s[1:-1]


class NonFiniteRunError(RunFileError):
    """A run file holds a NaN or infinite value inside the run: well formed, but not scorable."""


def sidecar_path(csv_path) -> Path:
    return Path(csv_path).with_suffix('.json')


_COLUMN_CACHE_SIZE = 16


def _reprs(a: np.ndarray) -> list[str]:
    """Return each value's ``repr`` (shortest round-trip form), the loop in C (1.5x a listcomp)."""
    return list(map(float.__repr__, a.tolist()))


def _column_text(a: np.ndarray, n: int, cache: dict | None = None, pad: str = '') -> list[str]:
    """
    Format a column as text, padded to n rows.

    Each value's ``repr`` (Python's shortest round-trip form), then ``pad`` ('' or '0.0') to n
    rows. ``cache`` maps (the column's bytes, n, pad) to its text, keeping the last
    ``_COLUMN_CACHE_SIZE`` columns: the runs of a study share their estimate stamps and, six at a
    time, their truth columns, and ``repr`` is most of the cost of writing a run.
    """
    if cache is None:
        return _reprs(a) + [pad] * (n - len(a))
    key = (a.tobytes(), n, pad)
    text = cache.pop(key, None)
    if text is None:
        text = _reprs(a) + [pad] * (n - len(a))
        if len(cache) >= _COLUMN_CACHE_SIZE:
            del cache[next(iter(cache))]  # least recently used
    cache[key] = text
    return text


def run_csv_text(rec: RunRecord, cache: dict | None = None, padding: str = 'empty') -> str:
    """
    Return the CSV text of a run.

    The CSV text of a run; ``padding`` of the shorter column pair: 'empty' cells or 'zero' (0.0,
    the authors' files).
    """
    if padding not in PADDINGS:
        raise ValueError(f'padding must be one of {", ".join(PADDINGS)}, got {padding!r}')
    pad = '' if padding == 'empty' else '0.0'
    se_n, gt_n = len(rec.se_t), len(rec.gt_t)
    n = max(se_n, gt_n)
    cols = [(rec.se_t, se_n), (rec.gt_t, gt_n), (rec.se_v, se_n), (rec.gt_v, gt_n)]
    header = list(PAPER_COLUMNS)
    if rec.has_components:
        cols += [(rec.se_vx, se_n), (rec.se_vy, se_n), (rec.gt_vx, gt_n), (rec.gt_vy, gt_n)]
        header += list(EXTRA_COLUMNS)
    for (a, m), h in zip(cols, header):
        if len(a) != m:
            raise ValueError(f'run column {h} has {len(a)} values, its stream has {m} stamps')
    text_cols = [_column_text(np.asarray(a, float), n, cache, pad) for a, _ in cols]
    lines = [','.join(header)] + [','.join(row) for row in zip(*text_cols)]
    return '\n'.join(lines) + '\n'


def write_run(
    csv_path, rec: RunRecord, meta: dict | None = None, fsync: bool = True, padding: str = 'empty'
) -> Path:
    """
    Write the sidecar, then the CSV, each atomically.

    The CSV under its final name marks the run complete; a sidecar without its CSV is a run that
    never completed (readers report it).
    """
    return write_runs([(csv_path, rec, meta)], fsync, padding)[0]


def write_runs(items, fsync: bool = True, padding: str = 'empty') -> list[Path]:
    """
    Write runs with their sidecars, each file atomically, sidecars first.

    ``[(csv_path, rec, meta), ...]``: every sidecar, then every CSV, each file atomically
    (``atomic_write_many``). With ``fsync`` each file's data is on disk before its rename and the
    sidecars' directories are synced before the first CSV is renamed, so a CSV under its final name
    has its sidecar even after a power loss; the CSVs' directories are synced once at the end. All
    texts are built (and validated) before anything is written. Sets ``rec.path`` and ``rec.meta``
    (the sidecar's dict).
    """
    todo, cache = [], {}
    for csv_path, rec, meta in items:
        csv_path = Path(csv_path)
        m: dict[str, Any] = dict(rec.meta)
        m.update(meta or {})
        m.update(
            {
                'format': FORMAT,
                'columns': list(PAPER_COLUMNS)
                + (list(EXTRA_COLUMNS) if rec.has_components else []),
                'se_len': int(len(rec.se_t)),
                'gt_len': int(len(rec.gt_t)),
            }
        )
        text = run_csv_text(rec, cache, padding)  # validates before anything is written
        side = json.dumps(m, indent=1, sort_keys=True, default=_json_default) + '\n'
        todo.append((csv_path, rec, m, text, side))
    atomic_write_many([(sidecar_path(p), side) for p, _, _, _, side in todo], fsync)
    atomic_write_many([(p, text) for p, _, _, text, _ in todo], fsync)
    for p, rec, m, _, _ in todo:
        rec.path = p
        rec.meta = m
    return [p for p, *_ in todo]


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f'not JSON serialisable: {type(o).__name__}')


# ------------------------------------------------------------------------------------------------
# read


def _has_empty_cell(line: str) -> bool:
    return ',,' in line or line.startswith(',') or line.endswith(',')


def _parse_fast(body: list[str], ncol: int):
    """
    (values, empty mask) by numpy's parser, or None (the caller parses cell by cell).

    Rows before the first one with an empty cell (found by bisection: padding is trailing) are
    parsed as they are — numpy refuses '1_0', other digit scripts and empty cells there —; the
    padded tail, if any, must be plain ASCII numbers and commas, its empty cells are parsed as NaN
    (the mask).
    """
    k = len(body)
    if _has_empty_cell(body[-1]):
        lo, hi = 0, len(body) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if _has_empty_cell(body[mid]):
                hi = mid
            else:
                lo = mid + 1
        k = lo
    vals, masks = [], []
    try:
        if k:
            vals.append(np.loadtxt(body[:k], delimiter=',', ndmin=2, dtype=float, comments=None))
            masks.append(np.zeros(vals[-1].shape, bool))
        if k < len(body):
            tail = '\n'.join(body[k:])
            if not tail.isascii() or _OTHER_CHAR_RE.search(tail):
                return None
            vals.append(
                np.loadtxt(
                    _fill_empty_cells(tail).split('\n'),
                    delimiter=',',
                    ndmin=2,
                    dtype=float,
                    comments=None,
                )
            )
            masks.append(np.isnan(vals[-1]))  # no 'nan' in the text: NaN = empty cell
    except ValueError:
        return None
    if any(v.shape[1] != ncol for v in vals):
        return None
    return (np.vstack(vals), np.vstack(masks)) if len(vals) > 1 else (vals[0], masks[0])


def _parse_csv(path: Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """
    (header names, values (rows, cols) with NaN for empty cells, mask of empty cells).

    Fast path (numpy's parser) for files of plain numbers and empty cells only; anything else
    (letters other than an exponent, '_', non-ASCII) goes cell by cell through ``NUMBER_RE``,
    which names the first cell that is not a plain decimal number.
    """
    try:
        text = path.read_bytes().decode('utf-8')
    except UnicodeDecodeError as exc:
        raise RunFileError(
            f'{path}: not a UTF-8 text CSV (byte {exc.start} cannot be decoded)'
        ) from None
    except OSError as exc:
        raise RunFileError(f'{path}: cannot read the run file ({exc.strerror})') from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RunFileError(
            f'{path}: empty file (expected a header {",".join(PAPER_COLUMNS)} and rows)'
        )
    header = [h.strip().strip('"').strip("'") for h in lines[0].split(',')]
    seen = set()
    for h in header:
        if h and h in seen:
            raise RunFileError(f'{path}: column {quote(h)} appears more than once in the header')
        seen.add(h)
    body = [ln for ln in lines[1:] if ln.strip()]
    ncol = len(header)
    if not body:
        return header, np.empty((0, ncol)), np.zeros((0, ncol), bool)
    fast = _parse_fast(body, ncol)
    if fast is not None:
        return (header,) + fast
    vals = np.full((len(body), ncol), np.nan)
    empty = np.zeros((len(body), ncol), bool)
    for i, ln in enumerate(body):
        cells = ln.split(',')
        if len(cells) != ncol:
            raise RunFileError(
                f'{path}: row {i + 2} has {len(cells)} fields, the header has {ncol}'
            )
        for c, cell in enumerate(cells):
            cell = cell.strip()
            if not cell:
                empty[i, c] = True
                continue
            if not NUMBER_RE.fullmatch(cell):
                raise RunFileError(
                    f'{path}: row {i + 2}, column {quote(header[c], 40)}: '
                    f'{quote(cell)} is not a number (plain decimal, e.g. 1.25 or '
                    f'-3e-2)'
                )
            vals[i, c] = float(cell)
    return header, vals, empty


def trailing_padding_start(t: np.ndarray, v: np.ndarray, t_empty=None, v_empty=None) -> int:
    """
    Return the length of a column pair without its trailing padding.

    Length of a column pair once its trailing padding is removed: tail rows where time and value
    are both exactly 0.0 (the time not increasing there — the first row is never padding), or both
    empty.
    """
    n = len(t)
    i = n
    while i > 1:
        r = i - 1
        zero = t[r] == 0.0 and v[r] == 0.0 and t[r] <= t[r - 1]
        blank = t_empty is not None and t_empty[r] and v_empty[r]
        if not (zero or blank):
            break
        i -= 1
    if i == 1 and t_empty is not None and t_empty[0] and v_empty[0]:
        return 0
    return i


def read_run(path, sidecar: bool | None = None) -> RunRecord:
    """
    Read one run file.

    ``sidecar``: None = use ``<name>.json`` when present; False = ignore it.
    """
    path = Path(path)
    if not path.is_file():
        raise RunFileError(f'{path}: run file not found')
    header, vals, empty = _parse_csv(path)
    idx = {}
    for name in PAPER_COLUMNS + EXTRA_COLUMNS:
        if name in header:
            idx[name] = header.index(name)
    missing = [c for c in PAPER_COLUMNS if c not in idx]
    if missing:
        raise RunFileError(
            f'{path}: missing column(s) {", ".join(missing)}; expected a header with '
            f'{", ".join(PAPER_COLUMNS)} (found {quote(",".join(header))})'
        )
    meta: dict = {}
    sc = sidecar_path(path)
    use_sidecar = sc.is_file() if sidecar is None else (sidecar and sc.is_file())
    if use_sidecar:
        meta = load_json(sc, what='run sidecar')
        if 'se_len' not in meta or 'gt_len' not in meta:
            raise RunFileError(f'{sc}: sidecar lacks se_len/gt_len (the true column lengths)')
        for k in ('se_len', 'gt_len'):
            if type(meta[k]) is not int:
                raise RunFileError(
                    f'{sc}: sidecar field {k} must be an integer (a row count), '
                    f'got {quote(meta[k])}'
                )
    col = {k: vals[:, i] for k, i in idx.items()}
    emp = {k: empty[:, i] for k, i in idx.items()}
    nrows = vals.shape[0]
    lens = {}
    for pre in ('se', 'gt'):
        t, v = col[f'{pre}_time'], col[f'{pre}_vel']
        if use_sidecar:
            n = meta[f'{pre}_len']
            if not 0 <= n <= nrows:
                raise RunFileError(
                    f'{path}: sidecar says {pre}_len = {quote(n, 30)} but the '
                    f'file has {nrows} rows'
                )
            pad = [
                (a[n:] == 0) | e[n:] for a, e in ((t, emp[f'{pre}_time']), (v, emp[f'{pre}_vel']))
            ]
            if not (np.all(pad[0]) and np.all(pad[1])):
                raise RunFileError(
                    f'{path}: rows after {pre}_len = {n} (from the sidecar) are '
                    f'not zero padding (0.0 or empty cells)'
                )
        else:
            n = trailing_padding_start(t, v, emp[f'{pre}_time'], emp[f'{pre}_vel'])
        lens[pre] = n
    out = {}
    for k, a in col.items():
        pre = k[:2]
        n = lens[pre]
        part = a[:n]
        if np.any(emp[k][:n]) or not np.all(np.isfinite(part)):
            bad = int(np.flatnonzero(~np.isfinite(part) | emp[k][:n])[0])
            # a value written as nan/inf is a run not to be scored (the evaluator excludes it);
            # an empty cell inside the run is a malformed file
            error = RunFileError if np.any(emp[k][:n]) else NonFiniteRunError
            raise error(
                f'{path}: column {k} row {bad + 2} is empty or not finite (NaN row inside the run)'
            )
        limit = MAX_ABS_TIME_S if k.endswith('_time') else MAX_ABS_VELOCITY_MPS
        big = np.flatnonzero(np.abs(part) > limit)
        if big.size:
            r = int(big[0])
            unit = 's' if k.endswith('_time') else 'm/s'
            raise RunFileError(
                f'{path}: column {k} row {r + 2} holds {float(part[r])!r}, beyond '
                f'the bound |{k}| <= {limit:g} {unit} of a run file'
            )
        out[k] = part.copy()
    for pre in ('se', 'gt'):
        t = out[f'{pre}_time']
        back = np.flatnonzero(np.diff(t) <= 0)
        if back.size:
            r = int(back[0]) + 1
            how = (
                'goes backwards'
                if t[r] < t[r - 1]
                else 'repeats a stamp (times must strictly increase)'
            )
            raise RunFileError(
                f'{path}: column {pre}_time {how} at row {r + 2} '
                f'({float(t[r - 1])!r} -> {float(t[r])!r})'
            )
    extras = all(k in out for k in EXTRA_COLUMNS)
    return RunRecord(
        out['se_time'],
        out['se_vel'],
        out['gt_time'],
        out['gt_vel'],
        out.get('se_vx') if extras else None,
        out.get('se_vy') if extras else None,
        out.get('gt_vx') if extras else None,
        out.get('gt_vy') if extras else None,
        meta=meta,
        path=path,
    )

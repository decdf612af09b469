# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run files: round trip, padding, bad files named, layout scanning, atomic writes.

Run files: exact round trip, padding rules, bad files named, layout scanning, atomic writes under
SIGKILL.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from vepd_ros.cli import main as vepd
from vepd_ros.metrics.records import RunRecord
from vepd_ros.runs import BatchWriter, read_run, RunFileError, scan_root, write_run
from vepd_ros.runs.batch import evaluate_root
from vepd_ros.runs.format import trailing_padding_start
from vepd_ros.testing.synthetic_runs import synthetic_run, write_authors_csv, write_synthetic_root

REPO = Path(__file__).resolve().parents[1]


def _rec(n_se=50, n_gt=20, seed=0):
    rng = np.random.default_rng(seed)
    return RunRecord.from_components(
        np.sort(rng.random(n_se)) * 5,
        rng.standard_normal(n_se),
        rng.standard_normal(n_se),
        np.r_[0.0, np.sort(rng.random(n_gt - 1)) * 5],
        np.r_[0.0, rng.random(n_gt - 1)],
        np.zeros(n_gt),
    )


@pytest.mark.parametrize('n_se, n_gt', [(50, 20), (20, 50), (30, 30)])
def test_round_trip_is_bit_exact_and_paper_columns_come_first(tmp_path, n_se, n_gt):
    rec = _rec(n_se, n_gt)
    p = write_run(tmp_path / 'circle_1.csv', rec, {'seed': 4, 'label': 'x'})
    assert p.read_text().splitlines()[0] == 'se_time,gt_time,se_vel,gt_vel,se_vx,se_vy,gt_vx,gt_vy'
    assert len(p.read_text().splitlines()) == 1 + max(n_se, n_gt)
    meta = json.loads(p.with_suffix('.json').read_text())
    assert (meta['se_len'], meta['gt_len'], meta['seed']) == (n_se, n_gt, 4)
    back = read_run(p)
    for f in ('se_t', 'se_v', 'gt_t', 'gt_v', 'se_vx', 'se_vy', 'gt_vx', 'gt_vy'):
        np.testing.assert_array_equal(getattr(back, f), getattr(rec, f))
    # without the sidecar the trailing-padding rule recovers the same lengths here
    back2 = read_run(p, sidecar=False)
    assert (len(back2.se_t), len(back2.gt_t)) == (n_se, n_gt)


def test_sidecar_lengths_win_over_heuristics(tmp_path):
    """
    A truth stream that ends parked keeps its zeros; a disagreeing sidecar is an error.

    A truth stream that ends parked keeps its zeros; a sidecar disagreeing with the file is an
    error.
    """
    rec = _rec(40, 10)
    rec.gt_v[-3:] = 0.0
    rec.gt_vx[-3:] = 0.0
    p = write_run(tmp_path / 'path_1.csv', rec)
    assert len(read_run(p).gt_t) == 10 and len(read_run(p, sidecar=False).gt_t) == 10
    meta = json.loads(p.with_suffix('.json').read_text())
    meta['se_len'] = 30
    p.with_suffix('.json').write_text(json.dumps(meta))
    with pytest.raises(RunFileError, match='not zero padding'):
        read_run(p)
    del meta['gt_len']
    p.with_suffix('.json').write_text(json.dumps(meta))
    with pytest.raises(RunFileError, match='se_len/gt_len'):
        read_run(p)


def test_trailing_padding_rule():
    t = np.array([0.0, 0.1, 0.2, 0.0, 0.0])
    v = np.array([0.0, 0.0, 0.0, 0.0, 0.0])
    assert trailing_padding_start(t, v) == 3  # true zero speeds kept, padding stripped
    assert trailing_padding_start(np.array([0.0]), np.array([0.0])) == 1
    assert (
        trailing_padding_start(np.array([0.0, 0.1, 0.0]), np.array([1.0, 1.0, 2.0])) == 3
    )  # not padding


def test_authors_files_with_pandas_index_and_empty_cells(tmp_path):
    rec = synthetic_run(np.random.default_rng(0), 'circle', 5.0)
    p = write_authors_csv(tmp_path / 'circle_1.csv', rec, index_column=True)
    back = read_run(p)
    np.testing.assert_array_equal(back.gt_v, rec.gt_v)
    assert back.se_vx is None
    with pytest.raises(RunFileError, match='needs the columns'):
        back.signal('vx')
    q = tmp_path / 'circle_2.csv'
    q.write_text('se_time,gt_time,se_vel,gt_vel\n0.0,0.0,1.0,0.0\n0.1,0.1,1.0,0.5\n0.2,,1.1,\n')
    b = read_run(q)
    assert (len(b.se_t), len(b.gt_t)) == (3, 2)


@pytest.mark.parametrize(
    'text, msg',
    [
        ('', 'empty file'),
        ('a,b,c\n1,2,3\n', 'missing column'),
        ('se_time,gt_time,se_vel,gt_vel\n0,0,1,1\n0.1,nan,1,1\n0.2,0.2,1,1\n', 'not finite'),
        ('se_time,gt_time,se_vel,gt_vel\n0,0,1,1\n0.1,,1,1\n0.2,0.2,1,1\n', 'empty or not finite'),
        ('se_time,gt_time,se_vel,gt_vel\n0,0,1,1\n0.1,0.5,1,1\n0.2,0.3,1,1\n', 'backwards'),
        ('se_time,gt_time,se_vel,gt_vel\n0,0,1,x\n', 'not a number'),
    ],
)
def test_bad_files_are_named(tmp_path, text, msg):
    p = tmp_path / 'sine_3.csv'
    p.write_text(text)
    with pytest.raises(RunFileError, match=msg) as e:
        read_run(p)
    assert 'sine_3.csv' in str(e.value)


def test_layout_errors_and_warnings(tmp_path):
    root = write_synthetic_root(
        tmp_path / 'r', 'authors', k=3, duration_s=4.0, models=('chWalk_results',)
    )
    (root / 'Real' / 'notes.txt').write_text('x')
    (root / 'Real' / 'circle_2.csv').unlink()
    (root / 'Sim' / 'chWalk_results' / 'sine_9.json').write_text('{}')
    lay = scan_root(root)
    w = '\n'.join(lay.warnings)
    assert 'notes.txt' in w and 'miss j = 2' in w and 'sidecar without its run file' in w
    assert list(lay.models) == ['chWalk'] and lay.models['chWalk'].display_name == 'Ch:RW'
    res = evaluate_root(root, n_boot=0)
    assert any('K differs' in x for x in res['warnings']) and any(
        'notes.txt' in x for x in res['warnings']
    )
    (root / 'Real' / 'zigzag_1.csv').write_text('se_time,gt_time,se_vel,gt_vel\n')
    with pytest.raises(ValueError, match='unknown scenario name.*zigzag'):
        scan_root(root)
    assert scan_root(root, scenarios=['zigzag']).real.runs['zigzag']
    (root / 'Real' / 'zigzag_1.csv').unlink()
    (root / 'Sim' / 'chWalk').mkdir()
    with pytest.raises(ValueError, match='both'):
        scan_root(root)
    (root / 'Sim' / 'chWalk').rmdir()
    with pytest.raises(FileNotFoundError, match='no Real/'):
        scan_root(root / 'Sim')


def test_batch_writer_index_and_next_index(tmp_path):
    w = BatchWriter(tmp_path, 'sim', 'ch_rw', fsync=False)
    assert w.next_index('circle') == 1
    w.write(_rec(), 'circle')
    w.write(_rec(seed=1), 'circle')
    assert w.next_index('circle') == 3 and w.next_index('sine') == 1
    idx = json.loads((tmp_path / 'Sim' / 'ch_rw' / 'index.json').read_text())
    assert [r['file'] for r in idx['runs']] == ['circle_1.csv', 'circle_2.csv'] and idx[
        'display_name'
    ] == 'Ch:RW'
    w2 = BatchWriter(tmp_path, 'sim', 'ch_rw', fsync=False)  # reopened: continues numbering
    assert w2.next_index('circle') == 3


def test_write_runs_batch_equals_single_writes_and_index_lists_them(tmp_path):
    """
    Batch writes equal single writes, and the index lists runs in the order written.

    write_runs (the study's workers) writes the same bytes as write_run; add_to_index lists runs
    written elsewhere in order, a rewritten run moving to the end, exactly as BatchWriter.write
    does.
    """
    from vepd_ros.runs.format import write_runs

    recs = [_rec(seed=s) for s in range(4)]
    single = BatchWriter(tmp_path / 'a', 'sim', 'ch_rw', fsync=False)
    for j, r in enumerate(recs, 1):
        single.write(
            RunRecord(
                **{
                    k: getattr(r, k)
                    for k in ('se_t', 'se_v', 'gt_t', 'gt_v', 'se_vx', 'se_vy', 'gt_vx', 'gt_vy')
                },
                meta=dict(r.meta),
            ),
            'circle',
            j=j,
        )
    batch = BatchWriter(tmp_path / 'b', 'sim', 'ch_rw', fsync=False)
    items = [(*batch.run_file('circle', j), r) for j, r in enumerate(recs, 1)]
    paths = write_runs([(p, r, m) for p, m, r in items], fsync=True)
    assert all(r.path == p for r, p in zip(recs, paths))
    batch.add_to_index(recs)
    da, db = tmp_path / 'a' / 'Sim' / 'ch_rw', tmp_path / 'b' / 'Sim' / 'ch_rw'
    assert sorted(x.name for x in da.iterdir()) == sorted(x.name for x in db.iterdir())
    for f in da.iterdir():
        assert f.read_bytes() == (db / f.name).read_bytes(), f.name
    batch.add_to_index([recs[1]])  # rewritten: moves to the end
    idx = json.loads((db / 'index.json').read_text())
    assert [r['file'] for r in idx['runs']] == [
        'circle_1.csv',
        'circle_3.csv',
        'circle_4.csv',
        'circle_2.csv',
    ]
    with pytest.raises(ValueError, match='stamps'):  # validated before anything is written
        bad = _rec()
        bad.se_v = bad.se_v[:-1]
        write_runs([(db / 'sine_1.csv', bad, {})])
    assert not (db / 'sine_1.csv').exists() and not (db / 'sine_1.json').exists()


_WRITER = r"""
import sys, numpy as np
from vepd_ros.metrics.records import RunRecord
from vepd_ros.runs import BatchWriter
root = sys.argv[1]
w = BatchWriter(root, 'sim', 'ch_rw')
for j in range(1, 10_000):
    rng = np.random.default_rng(j)
    n = 60_000
    t = np.arange(n) / 35.0
    rec = RunRecord.from_components(
        t, rng.standard_normal(n), rng.standard_normal(n), t[::2], np.full(n // 2, j * 1.0),
        np.zeros(n // 2)
    )
    w.write(rec, 'circle', {'seed': j}, j=j)
    print(j, flush=True)
"""


def test_sigkill_mid_batch_loses_no_completed_run(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, '-c', _WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True
    )
    done = 0
    deadline = time.monotonic() + 120
    while done < 3 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        done = int(line)
    time.sleep(0.05 + 0.1 * (done % 3))  # land somewhere inside the next write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert done >= 3, 'writer did not complete 3 runs'
    folder = tmp_path / 'Sim' / 'ch_rw'
    finals = sorted(folder.glob('circle_*.csv'))
    assert len(finals) >= done
    for p in finals:  # every file under a final name is a complete run
        j = int(p.stem.split('_')[1])
        rec = read_run(p)
        assert len(rec.se_t) == 60_000 and len(rec.gt_t) == 30_000
        assert np.all(rec.gt_v == j) and rec.meta['seed'] == j
        rng = np.random.default_rng(j)
        np.testing.assert_array_equal(rec.se_vx, rng.standard_normal(60_000))
    idx = json.loads((folder / 'index.json').read_text())
    assert {r['file'] for r in idx['runs']} <= {p.name for p in finals}
    assert len(idx['runs']) >= done
    # leftovers are only hidden temp files, which a new writer removes
    others = [
        p.name
        for p in folder.iterdir()
        if p.name not in {q.name for q in finals}
        and p.name != 'index.json'
        and not p.name.endswith('.json')
    ]
    assert all(n.startswith('.') and '.tmp-' in n for n in others), others
    w = BatchWriter(tmp_path, 'sim', 'ch_rw', fsync=False)
    assert not [p for p in folder.iterdir() if '.tmp-' in p.name]
    assert w.next_index('circle') == len(finals) + 1 or w.next_index('circle') > len(finals)


@pytest.fixture
def root(tmp_path):
    return write_synthetic_root(
        tmp_path / 'root', 'ours', k=3, scenarios=('straight', 'circle'), models=('ch_rw',)
    )


def _evaluate(root, capsys, *extra):
    rc = vepd(['evaluate', str(root), '--n-boot', '0', *extra])
    out, err = capsys.readouterr()
    assert 'Traceback' not in err
    return rc, out, err


def _rewrite_csv(path: Path, fn):
    lines = path.read_text().splitlines()
    path.write_text('\n'.join(fn(lines)) + '\n')


def _set_cell(lines, row, col, value):
    cells = lines[row].split(',')
    cells[col] = value
    lines[row] = ','.join(cells)
    return lines


CSV_CASES = {
    'constant se_time': (
        lambda ls: [ls[0]] + [_set_cell([ln], 0, 0, '1.5')[0] for ln in ls[1:30]] + ls[30:],
        'se_time',
    ),
    'repeated gt_time': (lambda ls: _set_cell(ls, 3, 1, ls[2].split(',')[1]), 'gt_time'),
    'duplicate column': (lambda ls: [ls[0].replace('se_vy', 'se_vel')] + ls[1:], 'more than once'),
    'underscore number': (lambda ls: _set_cell(ls, 4, 2, '1_0'), 'not a number'),
    'arabic digits': (lambda ls: _set_cell(ls, 4, 2, '\u0661'), 'not a number'),
    '1e308': (lambda ls: _set_cell(ls, 4, 2, '1e308'), 'beyond the bound'),
    'epoch stamps': (
        lambda ls: (
            [ls[0]] + [_set_cell([ln], 0, 0, repr(1.7e9 + i))[0] for i, ln in enumerate(ls[1:])]
        ),
        'beyond the bound',
    ),
    'huge cell': (lambda ls: _set_cell(ls, 4, 2, 'x' * 100_000), 'not a number'),
    'comment rows': (lambda ls: [ls[0]] + ['#' + ln for ln in ls[1:]], 'not a number'),
}


@pytest.mark.parametrize('case', sorted(CSV_CASES))
def test_bad_run_csv_is_exit_2_naming_file_and_column(root, capsys, case):
    fn, what = CSV_CASES[case]
    bad = root / 'Sim' / 'ch_rw' / 'circle_2.csv'
    _rewrite_csv(bad, fn)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(bad) in err and what in err, err
    assert len(err) < 1000  # never the whole bad input


NON_FINITE_CASES = {
    'inf': lambda ls: _set_cell(ls, 4, 3, 'inf'),
    'nan': lambda ls: _set_cell(ls, 4, 2, 'NaN'),
}


@pytest.mark.parametrize('case', sorted(NON_FINITE_CASES))
def test_run_csv_with_non_finite_values_is_excluded_naming_file_and_column(root, capsys, case):
    """A well-formed run holding nan/inf is not scored: excluded with its reason (issue 24)."""
    bad = root / 'Sim' / 'ch_rw' / 'circle_2.csv'
    _rewrite_csv(bad, NON_FINITE_CASES[case])
    rc, out, err = _evaluate(root, capsys, '--json')
    res = json.loads(out)
    (ex,) = res['excluded_runs']
    assert rc == 4 and ex['path'] == str(bad) and 'not finite' in ex['reason'], err
    assert res['k']['ch_rw']['circle'] == 2


SIDECAR_CASES = {
    'null': None,
    'list': [1, 2],
    'dict': {'a': 1},
    'Infinity': float('inf'),
    'bool': True,
    'string': '30',
    'float': 30.0,
    'huge': 10**30,
    'negative': -1,
}


@pytest.mark.parametrize('case', sorted(SIDECAR_CASES))
def test_bad_sidecar_se_len_is_a_clear_error(root, capsys, case):
    sc = root / 'Real' / 'straight_1.json'
    meta = json.loads(sc.read_text())
    meta['se_len'] = SIDECAR_CASES[case]
    sc.write_text(json.dumps(meta))
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and 'straight_1' in err and 'se_len' in err, err


@pytest.mark.parametrize(
    'content',
    [
        b'[' * 100_000 + b']' * 100_000,
        b'\xff\xfe\x00binary',
        b'[1, 2]',
        b'{"se_len": 3',
        b'',
        b'{"se_len": 1' + b'0' * 100_000 + b'}',
    ],
)
def test_unreadable_sidecar_names_the_file(root, capsys, content):
    sc = root / 'Real' / 'circle_3.json'
    sc.write_bytes(content)
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(sc) in err, err


def test_binary_csv_names_the_file(root, capsys):
    bad = root / 'Real' / 'circle_1.csv'
    bad.write_bytes(b'se_time,gt_time,se_vel,gt_vel\n\xff\xfe\x00\x01\n')
    rc, _, err = _evaluate(root, capsys)
    assert rc == 2 and str(bad) in err and 'UTF-8' in err


# ------------------------------------------------------------------------------------------------
# padding


def test_padding_is_empty_cells_and_every_layout_reads_the_same(tmp_path):
    rec = synthetic_run(np.random.default_rng(1), 'circle', 5.0)
    assert len(rec.se_t) != len(rec.gt_t)
    p = write_run(tmp_path / 'circle_1.csv', rec)
    tail = p.read_text().splitlines()[-1].split(',')
    assert '' in tail and '0.0' not in tail  # padding cannot be mistaken for 0 m/s
    (tmp_path / 'zero').mkdir()
    z = write_run(tmp_path / 'zero' / 'circle_1.csv', rec, padding='zero')
    assert z.read_text().splitlines()[-1].split(',').count('0.0') >= 4
    a = write_authors_csv(tmp_path / 'authors_1.csv', rec)
    for f in (p, z, a):
        for use_sidecar in (None, False):
            back = read_run(f, sidecar=use_sidecar)
            for k in ('se_t', 'se_v', 'gt_t', 'gt_v'):
                np.testing.assert_array_equal(getattr(back, k), getattr(rec, k))
    # empty cells inside the run (not trailing) are still an error
    lines = p.read_text().splitlines()
    lines[3] = _set_cell([lines[3]], 0, 0, '')[0]
    p.write_text('\n'.join(lines) + '\n')
    with pytest.raises(RunFileError, match='empty or not finite'):
        read_run(p)


def test_empty_padding_needs_no_slow_parse(tmp_path):
    """A padded file takes numpy's parser (the fast path), not the cell-by-cell one."""
    import vepd_ros.runs.format as fmt

    rec = RunRecord(np.arange(5.0), np.ones(5), np.arange(3.0), np.ones(3))
    p = write_run(tmp_path / 'circle_1.csv', rec)
    calls = []
    orig = fmt.NUMBER_RE
    try:

        class Spy:

            def fullmatch(self, s):
                calls.append(s)
                return orig.fullmatch(s)

        fmt.NUMBER_RE = Spy()
        read_run(p)
    finally:
        fmt.NUMBER_RE = orig
    assert calls == []


PROPS = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# -------------------------------------------------------------------------------------------
# properties

_cells = st.text(alphabet='0123456789.,-+eE_ \n\tnaif', max_size=300)
HEADER = 'se_time,gt_time,se_vel,gt_vel\n'


@PROPS
@given(body=st.one_of(_cells.map(str.encode), st.binary(max_size=300)), header=st.booleans())
def test_reading_any_csv_bytes_gives_a_run_or_a_run_file_error(tmp_path_factory, body, header):
    p = tmp_path_factory.mktemp('csv') / 'circle_1.csv'
    p.write_bytes((HEADER.encode() if header else b'') + body)
    try:
        rec = read_run(p)
    except RunFileError as exc:
        assert str(p) in str(exc) and len(str(exc)) < 1000
        return
    for t in (rec.se_t, rec.gt_t):
        assert np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)


@PROPS
@given(
    side=st.binary(max_size=200)
    | st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(st.sampled_from(['se_len', 'gt_len', 'x']), c, max_size=3)
        ),
        max_leaves=8,
    ).map(lambda o: json.dumps(o).encode())
)
def test_reading_any_sidecar_gives_a_run_or_a_run_file_error(tmp_path_factory, side):
    d = tmp_path_factory.mktemp('side')
    rec = RunRecord(np.arange(5.0), np.ones(5), np.arange(3.0), np.ones(3))
    p = write_run(d / 'circle_1.csv', rec)
    p.with_suffix('.json').write_bytes(side)
    try:
        back = read_run(p)
    except RunFileError as exc:
        assert 'circle_1' in str(exc) and len(str(exc)) < 1000
        return
    assert len(back.se_t) == back.meta['se_len'] and len(back.gt_t) == back.meta['gt_len']

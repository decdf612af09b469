# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""The prototype kernel equals Ekf's batch predict and correct bit for bit, at K = 1 and K = 30."""

import math

import numpy as np
import pytest
from vepd_ros.judge import kernel
from vepd_ros.judge.ekf import clamp_variances, Ekf, index_set

UPDATE_SETS = ([6, 7, 8], [0, 1, 2], [3, 4, 5, 9, 10, 11, 12, 13, 14], [5], [6, 11], [3, 5])


def _states(rng, k):
    x = rng.normal(size=(k, 15))
    a = rng.normal(size=(k, 15, 15))
    return x, 0.1 * np.matmul(a, a.transpose(0, 2, 1))


def _ekf(x, P):
    e = Ekf(k=x.shape[0])
    e.x, e.P = x.copy(), P.copy()
    return e


@pytest.mark.parametrize('k', [1, 30])
def test_predict_equals_batch_predict(k):
    rng = np.random.default_rng(14)
    ws = kernel.Workspace(k)
    for _ in range(50):
        x, P = _states(rng, k)
        dt = float(rng.uniform(1e-3, 0.1))
        e = _ekf(x, P)
        e._predict_batch(dt)
        xn, Pn = kernel.predict(x, P, dt, dt * e.Q, ws)
        assert np.array_equal(xn, e.x) and np.array_equal(Pn, e.P)


@pytest.mark.parametrize('k', [1, 30])
@pytest.mark.parametrize('gate', [math.inf, 2.0])
def test_correct_equals_batch_correct(k, gate):
    rng = np.random.default_rng(15)
    thr2 = gate * gate
    n_accepted = n_rejected = 0
    for _ in range(20):
        for idx in UPDATE_SETS:
            x, P = _states(rng, k)
            m = len(idx)
            s = index_set(tuple(i in idx for i in range(15)))
            zs = x[:, idx] + rng.normal(size=(k, m))
            b = rng.normal(size=(k, m, m))
            Rs = clamp_variances(0.1 * np.matmul(b, b.transpose(0, 2, 1)) + 0.1 * np.eye(m))
            e = _ekf(x, P)
            acc_old = e._correct_subset_batch(s, zs, Rs, thr2, None, True)
            xn, Pn, acc = kernel.correct(x, P, s.idx, s.ang_cols, zs, Rs, thr2)
            assert np.array_equal(acc, acc_old)
            assert np.array_equal(xn, e.x) and np.array_equal(Pn, e.P)
            n_accepted += int(acc.sum())
            n_rejected += int((~acc).sum())
    # the property is tested on both branches of the gate
    assert n_accepted > 0 and (gate == math.inf or n_rejected > 0)


@pytest.mark.parametrize('k', [1, 30])
def test_predict_dense_equals_k1_predict_run_by_run(k):
    """K = 1's arithmetic over a batch: every run equals ``_predict_k1`` on it alone."""
    rng = np.random.default_rng(16)
    ws = kernel.DenseWorkspace(k)
    for _ in range(30):
        x, P = _states(rng, k)
        x[:, 3:6] *= 2.0  # angles over the whole circle: the wrap and tan's branches
        dt = float(rng.uniform(1e-3, 0.1))
        Qdt = dt * Ekf().Q
        xn, Pn = kernel.predict_dense(x, P, dt, Qdt, ws)
        for r in range(k):
            e = _ekf(x[r:r + 1], P[r:r + 1])
            e._predict_k1(dt)
            assert np.array_equal(xn[r], e.x[0]) and np.array_equal(Pn[r], e.P[0])


@pytest.mark.parametrize('k', [1, 30])
@pytest.mark.parametrize('gate', [math.inf, 2.0])
def test_correct_dense_equals_k1_correct_run_by_run(k, gate):
    """K = 1's correct over a batch: every run equals ``_correct_k1`` on it alone."""
    rng = np.random.default_rng(17)
    thr2 = gate * gate
    seen = set()
    for _ in range(20):
        for idx in ([6, 7, 8], [0, 1, 2], [5], [6, 11], [3, 5], [3, 4, 5], [3, 4, 5, 9],
                    [3, 4, 5, 9, 10, 11, 12, 13, 14]):
            x, P = _states(rng, k)
            m = len(idx)
            s = index_set(tuple(i in idx for i in range(15)))
            zs = x[:, idx] + rng.normal(size=(k, m)) * 4.0
            b = rng.normal(size=(m, m))
            Rs = clamp_variances(0.1 * b @ b.T + 0.1 * np.eye(m))
            xn, Pn, acc = kernel.correct_dense(x, P, s.idx, s.ang_list, zs, Rs, thr2)
            for r in range(k):
                e = _ekf(x[r:r + 1], P[r:r + 1])
                assert acc[r] == e._correct_k1(s, zs[r].tolist(), Rs, thr2)
                assert np.array_equal(xn[r], e.x[0]) and np.array_equal(Pn[r], e.P[0])
            seen.update(acc.tolist())
    assert seen == ({True} if gate == math.inf else {True, False})

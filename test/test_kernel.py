# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""The kernel's one predict and correct: each run of a batch equals that run alone, bit for bit."""

import math

import numpy as np
import pytest
from vepd_ros.judge import kernel
from vepd_ros.judge.ekf import clamp_variances, Ekf, gate_bound_variances, index_set

UPDATE_SETS = (
    [6, 7, 8], [0, 1, 2], [5], [6, 11], [3, 5], [3, 4, 5], [3, 4, 5, 9],
    [3, 4, 5, 9, 10, 11, 12, 13, 14],
)
AXES = (  # control_change axes: (i, deceleration limit, gain, acceleration limit, gain)
    (0, 1.3, 0.8, 1.3, 1.0), (1, 0.5, 0.6, 0.6, 0.7), (3, 0.4, 0.9, 0.5, 1.0),
    (5, 3.4, 0.9, 4.5, 1.0),
)


def _states(rng, k):
    x = rng.normal(size=(k, 15))
    x[:, 3:6] *= 2.0  # angles over the whole circle: the wrap and tan's branches
    a = rng.normal(size=(k, 15, 15))
    return x, 0.1 * np.matmul(a, a.transpose(0, 2, 1))


def _one(x, P, r, dt, dynamic, control):
    """Return run r predicted alone (K = 1, the float form)."""
    ws = kernel.Workspace(1)
    return kernel.predict(x[r:r + 1], P[r:r + 1], dt, Ekf().Q, ws, dynamic, control)


@pytest.mark.parametrize('k', [2, 30])
@pytest.mark.parametrize('dynamic', [False, True])
@pytest.mark.parametrize('control', [None, AXES, AXES[2:]])
def test_predict_batch_equals_each_run_alone(k, dynamic, control):
    """Predict (control, dynamic noise) over K runs: each run has the bits it has at K = 1."""
    rng = np.random.default_rng(16 + k)
    ws = kernel.Workspace(k)
    Q = Ekf().Q
    for trial in range(20):
        x, P = _states(rng, k)
        if trial % 4 == 0:  # zero and signed-zero rates: δ = 0 in some runs
            x[: k // 2, 6:15] = rng.choice([0.0, -0.0], (k // 2, 9))
        if trial % 4 == 1:  # one run at rest at signed-zero positions: x⁺'s positions stay ±0,
            x[k - 1, 0:3] = (0.0, -0.0, -0.0)  # where control's ±0 position term counts
            x[k - 1, 6:9] = x[k - 1, 12:15] = 0.0
        dt = float(rng.uniform(1e-3, 0.1))
        xn, Pn = kernel.predict(x, P, dt, Q, ws, dynamic, control)
        for r in range(k):
            x1, P1 = _one(x, P, r, dt, dynamic, control)
            assert xn[r].tobytes() == x1[0].tobytes() and Pn[r].tobytes() == P1[0].tobytes()


@pytest.mark.parametrize('k', [2, 30])
@pytest.mark.parametrize('gate', [math.inf, 2.0])
def test_correct_batch_equals_each_run_alone(k, gate):
    """Correct over K runs: each run's verdict, x and P are those it has alone (both verdicts)."""
    rng = np.random.default_rng(17 + k)
    thr2 = gate * gate
    seen = set()
    for _ in range(10):
        for idx in UPDATE_SETS:
            x, P = _states(rng, k)
            m = len(idx)
            s = index_set(tuple(i in idx for i in range(15)))
            zs = x[:, idx] + rng.normal(size=(k, m)) * 4.0
            b = rng.normal(size=(k, m, m))
            Rs = clamp_variances(0.1 * np.matmul(b, b.transpose(0, 2, 1)) + 0.1 * np.eye(m))
            xn, Pn, acc, refused = kernel.correct(x, P, s, zs, Rs, thr2)
            assert refused == {}
            for r in range(k):
                x1, P1, a1, _ = kernel.correct(x[r:r + 1], P[r:r + 1], s, zs[r:r + 1], Rs[r], thr2)
                assert acc[r] == a1[0]
                assert xn[r].tobytes() == x1[0].tobytes() and Pn[r].tobytes() == P1[0].tobytes()
                if not acc[r]:
                    assert xn[r].tobytes() == x[r].tobytes() and Pn[r].tobytes() == P[r].tobytes()
            seen.update(acc.tolist())
    assert seen == ({True} if gate == math.inf else {True, False})


@pytest.mark.parametrize('idx', [[5], [6, 11], [0, 1, 2], [3, 4, 5, 9, 10, 11, 12, 13, 14]])
def test_correct_refuses_a_singular_s_run_by_run(idx):
    """A singular S refuses (and counts) that run only; the others update as they would alone."""
    rng = np.random.default_rng(3)
    k, m = 5, len(idx)
    x, P = _states(rng, k)
    s = index_set(tuple(i in idx for i in range(15)))
    P[1] = 0.0
    P[3] = 0.0
    Rs = np.zeros((k, m, m))
    Rs[:] = np.eye(m) * 0.1
    Rs[1] = Rs[3] = 0.0
    zs = x[:, idx] + 0.1
    for thr2 in (math.inf, 1e6):
        xn, Pn, acc, refused = kernel.correct(x, P, s, zs, Rs, thr2)
        assert acc.tolist() == [True, False, True, False, True]
        assert refused == {kernel.REFUSED_SINGULAR: 2}
        for r in range(k):
            x1, P1, a1, ref1 = kernel.correct(x[r:r + 1], P[r:r + 1], s, zs[r:r + 1], Rs[r], thr2)
            assert a1[0] == acc[r] and ref1 == ({} if acc[r] else {kernel.REFUSED_SINGULAR: 1})
            assert xn[r].tobytes() == x1[0].tobytes() and Pn[r].tobytes() == P1[0].tobytes()


def test_correct_refuses_a_non_finite_state_run_by_run():
    """An update that would make x or P non-finite is refused and counted for that run only."""
    rng = np.random.default_rng(5)
    k = 4
    x, P = _states(rng, k)
    s = index_set(tuple(i in (6, 7, 8) for i in range(15)))
    zs = x[:, 6:9] + 0.5
    zs[2, 0] = 1e308  # overflows x⁺
    P[2] *= 1e300
    Rs = np.eye(3) * 1e-9
    xn, Pn, acc, refused = kernel.correct(x, P, s, zs, Rs)
    assert acc.tolist() == [True, True, False, True]
    assert refused == {kernel.REFUSED_NOT_FINITE: 1}
    assert xn[2].tobytes() == x[2].tobytes() and Pn[2].tobytes() == P[2].tobytes()
    x1, P1, a1, ref1 = kernel.correct(x[2:3], P[2:3], s, zs[2:3], Rs)
    assert not a1[0] and ref1 == {kernel.REFUSED_NOT_FINITE: 1}


@pytest.mark.parametrize('idx', [[3, 5, 11], [2, 3, 4, 8, 9, 10, 12, 13, 14]])
def test_early_gate_gives_the_full_verdict(idx):
    """K = 1's early gate (``rdiag``) rejects only what the full distance rejects, same bits."""
    rng = np.random.default_rng(sum(idx))
    s = index_set(tuple(i in idx for i in range(15)))
    m = len(idx)
    verdicts, early = set(), 0
    for trial in range(100):
        x, P = _states(rng, 1)
        R = clamp_variances(np.diag(rng.uniform(1e-3, 1.0, m)))
        rd = gate_bound_variances(R[None])[0]
        zs = x[:, idx] + rng.normal(size=(1, m)) * (0.3 if trial % 2 else 3.0)
        ws = kernel.Workspace(1)
        a = kernel.correct(x, P, s, zs, R, 0.64, ws, rd)
        b = kernel.correct(x, P, s, zs, R, 0.64)
        assert a[2][0] == b[2][0] and a[0].tobytes() == b[0].tobytes()
        assert a[1].tobytes() == b[1].tobytes()
        verdicts.add(bool(a[2][0]))
        early += id(s) in ws.gate_first
    assert verdicts == {True, False} and early > 0


def test_wrap_float_and_array_agree():
    """``wrap`` gives the same bits on floats and arrays, into (−π, π]."""
    a = np.random.default_rng(1).uniform(-40.0, 40.0, 1000)
    a[:4] = (math.pi, -math.pi, 3 * math.pi, 0.0)
    w = kernel.wrap(a)
    assert w.tobytes() == np.array([kernel.wrap(v) for v in a.tolist()]).tobytes()
    assert ((w > -math.pi) & (w <= math.pi)).all()

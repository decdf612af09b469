"""vepd_ros.models.lfilter: scipy.signal.lfilter's numbers, bit for bit, without importing scipy.signal."""
import subprocess
import sys

import numpy as np
import pytest
from scipy.signal import lfilter as scipy_lfilter

from vepd_ros.models.lfilter import lfilter


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_first_order_filters_equal_scipy_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = float(rng.uniform(0.5, 0.9999)), float(rng.uniform(0.01, 2.0))
        u = rng.standard_normal(int(rng.integers(1, 5000)))
        u[rng.random(u.size) < 0.1] = 0.0                # exact zeros: signed-zero behaviour kept too
        assert _same(lfilter([0.0, b], [1.0, -a], u), scipy_lfilter([0.0, b], [1.0, -a], u))
        x = rng.standard_normal((300, 3))
        zi = rng.standard_normal((1, 3))
        got, zf = lfilter([1.0], [1.0, -a], x, axis=0, zi=zi)
        want, wzf = scipy_lfilter([1.0], [1.0, -a], x, axis=0, zi=zi)
        assert _same(got, want) and _same(zf, wzf)


def test_rejects_fir_filters():
    with pytest.raises(ValueError):
        lfilter([1.0, 0.5], [1.0], np.ones(4))


def test_truth_generation_does_not_import_scipy_signal():
    code = ('import sys; from vepd_ros.truth import generate; generate("sine", 2.0, 1); '
            'print(sorted(m for m in sys.modules if m.startswith("scipy")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert set(eval(out)) <= {'scipy.signal._sigtools'}          # the kernel's extension module only

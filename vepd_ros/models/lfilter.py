"""``scipy.signal.lfilter`` for recursive filters (len(a) > 1) without importing ``scipy.signal``.

The truth generator (``vepd_ros.truth.vehicle``: speed, steering servo, Ornstein–Uhlenbeck wander) and the
Allan IMU model (Gauss–Markov bias) each need one linear recursion, the direct form II transposed of
``scipy.signal.lfilter`` (a normalised by a[0]):

    y[n]   = b[0] x[n] + z[0][n-1]
    z[i][n] = b[i+1] x[n] + z[i+1][n-1] - a[i+1] y[n]

``import scipy.signal`` costs ~0.5 s (its ``__init__`` loads scipy.special, linalg, fft, ...), paid again by
every worker process of ``vepd study``; lfilter itself is the C kernel ``scipy.signal._sigtools._linear_filter``.
This module loads that extension module from its file (≈ 0.3 ms, without the package ``__init__``) and
calls it exactly as ``lfilter`` does for len(a) > 1, so every output is lfilter's bit for bit
(``test/test_models_lfilter.py`` compares them). If the kernel cannot be loaded (another scipy layout),
``scipy.signal.lfilter`` itself is used — slower to import, same numbers.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import numpy as np

_KERNEL_MODULE = 'scipy.signal._sigtools'
_kernel = None


def _load_kernel():
    """``_linear_filter`` from scipy.signal's extension module, or None when it is not where scipy 1.x keeps it."""
    mod = sys.modules.get(_KERNEL_MODULE)
    if mod is None:
        spec = importlib.util.find_spec('scipy')
        if spec is None or not spec.submodule_search_locations:
            return None
        for root in spec.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = Path(root) / 'signal' / f'_sigtools{suffix}'
                if path.is_file():
                    try:
                        s = importlib.util.spec_from_file_location(_KERNEL_MODULE, path)
                        mod = importlib.util.module_from_spec(s)
                        s.loader.exec_module(mod)
                    except (ImportError, OSError):
                        return None
                    break
            if mod is not None:
                break
    return getattr(mod, '_linear_filter', None)


def lfilter(b, a, x, axis: int = -1, zi=None):
    """``scipy.signal.lfilter(b, a, x, axis, zi)`` for len(a) > 1 (returns ``y``, or ``(y, zf)`` with ``zi``)."""
    global _kernel
    b = np.atleast_1d(b)
    a = np.atleast_1d(a)
    if len(a) < 2 or b.ndim != 1 or a.ndim != 1 or not b.size:
        raise ValueError('lfilter: b and a must be non-empty 1-D and len(a) > 1 (a recursive filter)')
    if _kernel is None:
        _kernel = _load_kernel()
        if _kernel is None:
            from scipy.signal import lfilter as scipy_lfilter
            _kernel = _scipy_kernel(scipy_lfilter)
    x = np.asarray(x)
    if zi is None:
        return _kernel(b, a, x, axis)
    return _kernel(b, a, x, axis, np.asarray(zi))


def _scipy_kernel(scipy_lfilter):
    def kernel(b, a, x, axis, zi=None):
        return scipy_lfilter(b, a, x, axis=axis, zi=zi)
    return kernel

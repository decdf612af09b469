# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
VEPD metrics: per-run E and S, W1, W2, VEPD, ranks, intervals.

VEPD metrics (arXiv 2403.11000 §II-E; design.md §6): per-run E and S, W1, W2, VEPD, ranks,
intervals.

run_metrics(se_t, se_v, gt_t, gt_v) -> (E, S)        one run, the reference implementation
batch_metrics(lists...) -> (E[], S[])                K runs vectorised, equal to run_metrics
vepd(real_E, real_S, sim_E, sim_S) -> {W1, W2, VEPD}
EvaluatorCore, evaluate_root(root, velocity='speed') -> dict   (vepd_ros.metrics.evaluator)
"""

from vepd_ros.metrics.core import (
    batch_metrics,
    get_preprocessing,
    moving_average,
    PREPROCESSING,
    Preprocessing,
    resample_run,
    run_metrics,
    RunDataError,
    spectral_flatness,
)
from vepd_ros.metrics.evaluator import evaluate_root, EvaluatorCore
from vepd_ros.metrics.vepd import bootstrap_vepd, rank, vepd, wasserstein_weighted_batch

__all__ = [
    'PREPROCESSING',
    'Preprocessing',
    'RunDataError',
    'batch_metrics',
    'get_preprocessing',
    'moving_average',
    'resample_run',
    'run_metrics',
    'spectral_flatness',
    'bootstrap_vepd',
    'rank',
    'vepd',
    'wasserstein_weighted_batch',
    'EvaluatorCore',
    'evaluate_root',
]

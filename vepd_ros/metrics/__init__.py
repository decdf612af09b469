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
EvaluatorCore                                  (vepd_ros.metrics.evaluator; runs as arrays)
RunRecord, VELOCITY_KINDS                      one run's arrays (vepd_ros.metrics.records)
(a directory of run files: vepd_ros.runs.batch.evaluate_root)
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
from vepd_ros.metrics.evaluator import EvaluatorCore
from vepd_ros.metrics.records import RunRecord, VELOCITY_KINDS
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
    'RunRecord',
    'VELOCITY_KINDS',
]

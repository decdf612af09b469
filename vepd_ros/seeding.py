# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Derive every run's seeds from one study seed.

Seeds for studies: one study seed → every run's truth and sensor-noise seed, the same in every
front.

The offline study, the ROS graph (truth_node, noise nodes) and the tests derive seeds here, so the
same study seed gives the same runs whichever way the flow is run. Derivation is by name, not by
position: adding a model or a scenario to a study does not change the seeds of the others.

    derive_seed(seed, 'truth', scenario, j)         truth jitter of run j of a scenario
    derive_seed(seed, 'gps', label, scenario, j)    GPS noise of that run under model/label
    derive_seed(seed, 'imu', label, scenario, j)    IMU noise likewise
"""

from __future__ import annotations

import zlib

import numpy as np


def _key(k) -> int:
    return int(k) if isinstance(k, (int, np.integer)) else zlib.crc32(str(k).encode())


def derive_seed(seed: int, *keys) -> int:
    """
    Derive a 32-bit seed from a study seed and a path of names/indices.

    A 32-bit seed from a study seed and a path of names/indices (numpy SeedSequence entropy
    mixing).
    """
    return int(np.random.SeedSequence([int(seed)] + [_key(k) for k in keys]).generate_state(1)[0])


def run_plan(seed: int, scenarios, runs: int) -> list[tuple[str, int, int]]:
    """
    Return (scenario, j, truth_seed) for every run of a study.

    (scenario, j, truth_seed) for every run of a study: scenarios in the given order, runs j = 1..K
    (the authors' file numbering ``<scenario>_<j>.csv``).
    """
    return [
        (s, j, derive_seed(seed, 'truth', s, j)) for s in scenarios for j in range(1, runs + 1)
    ]

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
One run as the metric core takes it: estimate and truth streams, each with its own stamps.

``RunRecord`` holds arrays only (seconds from the run start, m/s); where they come from — a run
file (``vepd_ros.runs.format.read_run``), the recorder, the study — is not its business.
``VELOCITY_KINDS``: the velocity signals a run is scored on ('speed': horizontal speed, the paper's
columns; 'vx': the body-frame forward component; 'vector': vx + 1j·vy, the vector form of the
paper's eq. 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from vepd_ros.fileio import RunFileError

VELOCITY_KINDS = ('speed', 'vx', 'vector')
COMPONENT_FIELDS = ('se_vx', 'se_vy', 'gt_vx', 'gt_vy')
"""A run's optional body-frame components (the authors' files lack them)."""


@dataclass
class RunRecord:
    """
    One run: estimate (se) and truth (gt) streams, each with its own stamps.

    Stamps are seconds from the run start.
    """

    se_t: np.ndarray
    se_v: np.ndarray  # horizontal speed, m/s
    gt_t: np.ndarray
    gt_v: np.ndarray
    se_vx: np.ndarray | None = None  # body-frame components (optional; authors' files lack them)
    se_vy: np.ndarray | None = None
    gt_vx: np.ndarray | None = None
    gt_vy: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def from_components(cls, se_t, se_vx, se_vy, gt_t, gt_vx, gt_vy, meta=None) -> 'RunRecord':
        """From body-frame components; the speed columns are hypot(vx, vy)."""
        a = [np.asarray(x, float) for x in (se_t, se_vx, se_vy, gt_t, gt_vx, gt_vy)]
        return cls(
            a[0],
            np.hypot(a[1], a[2]),
            a[3],
            np.hypot(a[4], a[5]),
            a[1],
            a[2],
            a[4],
            a[5],
            dict(meta or {}),
        )

    @property
    def has_components(self) -> bool:
        return all(x is not None for x in (self.se_vx, self.se_vy, self.gt_vx, self.gt_vy))

    @property
    def name(self) -> str:
        return str(self.path) if self.path else str(self.meta.get('name', 'run'))

    def signal(
        self, velocity: str = 'speed'
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """
        Return (se_t, se_x, gt_t, gt_x) for a velocity kind.

        (se_t, se_x, gt_t, gt_x) for a velocity kind: 'speed' (paper columns), 'vx' (body forward
        component), 'vector' (complex vx + 1j*vy, the vector form of the paper's eq. 1).
        """
        if velocity == 'speed':
            return self.se_t, self.se_v, self.gt_t, self.gt_v
        if velocity not in VELOCITY_KINDS:
            raise ValueError(
                f"unknown velocity '{velocity}': expected one of {', '.join(VELOCITY_KINDS)}"
            )
        if not self.has_components:
            raise RunFileError(
                f"{self.name}: velocity '{velocity}' needs the columns "
                f"{', '.join(COMPONENT_FIELDS)}; "
                f"this run has only the paper's four columns (use velocity 'speed')"
            )
        if velocity == 'vx':
            return self.se_t, self.se_vx, self.gt_t, self.gt_vx
        return self.se_t, self.se_vx + 1j * self.se_vy, self.gt_t, self.gt_vx + 1j * self.gt_vy

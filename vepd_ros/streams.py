# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Stream schema: the one place for time units, topic names and sensor sample arrays.

Every core (models, truth, io, judge, runs) and every front (nodes, launch, commands) takes the
nanoseconds-per-second constant and the suite's ROS topic names from here; nothing else spells
them. It imports only the standard library when loaded (numpy inside the functions that compute),
so any module may import it without a cycle, and a command's ``--help`` loads no numpy for it.

``Stream``: one topic's samples for K runs that share their message timing (header stamps and
arrivals), the fields named as in the ROS message and stacked with the run axis first.
``imu_fields``/``fix_fields``: one run's sensor-model arrays under those field names (the judge
step stacks them on a run axis; ``io.write_bag`` writes them as messages).
``JudgeResult``: what the judge published (/odometry/filtered) for K runs, the one result type of
the judge step (``vepd_ros.pipelines.judge_step.judge``) whatever the judge and the grouping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: numpy is imported where it computes
    import numpy as np

NS = 1_000_000_000
"""Nanoseconds per second (ROS ``builtin_interfaces/Time`` resolution)."""


def ns_from_s(t_s) -> np.ndarray:
    """Return times in seconds as int64 nanoseconds, round(t · 1e9) (simulated message stamps)."""
    import numpy as np

    return np.round(np.asarray(t_s, float) * NS).astype(np.int64)


# Topics of the simulated graph (truth_node -> noise nodes -> judge -> recorder -> evaluator).
TOPIC_GROUND_TRUTH = '/ground_truth/odometry'
"""nav_msgs/Odometry: noise-free vehicle state from truth_node (the recorder's reference)."""
TOPIC_GROUND_TRUTH_IMU = '/ground_truth/imu'
"""sensor_msgs/Imu: noise-free specific force and rate from truth_node (imu_noise_node input)."""
TOPIC_RUN_EVENTS = '/ground_truth/run'
"""std_msgs/String (JSON): run start/end events from truth_node."""
TOPIC_GPS_FIX = '/gps/fix'
"""sensor_msgs/NavSatFix: simulated or real GPS fixes (the judge's GPS input)."""
TOPIC_IMU = '/imu/data'
"""sensor_msgs/Imu: simulated or real IMU samples (the judge's IMU input)."""
TOPIC_ODOM_FILTERED = '/odometry/filtered'
"""nav_msgs/Odometry: the judge's state estimate (robot_localization's default output)."""
TOPIC_INS_VELOCITY = '/sbg/gps_vel'
"""sbg_driver/SbgGpsVel: INS velocity used as ground truth in recorded bags (ART, NED)."""
TOPIC_ART_GPS_FIX = '/fix'
"""sensor_msgs/NavSatFix: the ART vehicle's receiver in its bags (nmea_navsat_driver)."""
TOPIC_ART_IMU = '/imu'
"""sensor_msgs/Imu: the ART vehicle's IMU in its bags (WHEELTEC N-100 driver)."""
TOPIC_RUNS = '/vepd/runs'
"""std_msgs/String (JSON): completed (E, S) run records from the recorder."""
TOPIC_RESULT = '/vepd/result'
"""std_msgs/String (JSON): the evaluator's VEPD result."""
TOPIC_PROGRESS = '/vepd/progress'
"""std_msgs/String (JSON): per-node simulated-time progress (truth_node's pacing)."""


def topic_key(name: str | None) -> str:
    """Return a topic name without its leading and trailing '/' (how replay matches topics)."""
    return (name or '').strip('/')


STREAM_KINDS = ('imu', 'fix', 'odom', 'estimate')
"""
Kinds of ``Stream`` and their fields (each float64 with the run axis first unless noted).

* imu: orientation (K, n, 4) x y z w, angular_velocity, linear_acceleration (K, n, 3),
  orientation_covariance, angular_velocity_covariance, linear_acceleration_covariance (K, n, 9);
* fix: latitude, longitude (deg), altitude (m) (K, n), position_covariance (K, n, 9),
  status (K, n) int;
* odom: position (K, n, 3), orientation (K, n, 4), linear, angular (K, n, 3),
  pose_covariance, twist_covariance (K, n, 36);
* estimate: state (K, n, 15) in robot_localization's order (velocities in the body frame, as
  /odometry/filtered carries them), and p_diag (K, n, 15) or P (K, n, 15, 15).
"""


def imu_fields(imu) -> dict:
    """Return one run's ``models.imu.ImuArrays`` as an imu ``Stream``'s fields (no run axis)."""
    return {
        'angular_velocity': imu.angular_velocity,
        'linear_acceleration': imu.linear_acceleration,
        'orientation': imu.orientation,
        'orientation_covariance': imu.orientation_covariance.reshape(-1, 9),
        'angular_velocity_covariance': imu.angular_velocity_covariance.reshape(-1, 9),
        'linear_acceleration_covariance': imu.linear_acceleration_covariance.reshape(-1, 9),
    }


def fix_fields(gps, lla) -> dict:
    """
    Return one run's GPS samples as the fields of a fix ``Stream`` (no run axis).

    ``gps`` is a ``models.gps.GpsSamples``, ``lla`` its (n, 3) latitude, longitude (deg) and
    altitude (m). Samples the receiver did not publish become NaN positions (navsat ignores them).
    """
    import numpy as np

    lla = np.array(lla, float)
    lla[~np.asarray(gps.published, bool)] = np.nan
    return {
        'latitude': lla[:, 0],
        'longitude': lla[:, 1],
        'altitude': lla[:, 2],
        'position_covariance': gps.covariance_enu.reshape(-1, 9),
        'status': np.asarray(gps.status),
    }


@dataclass(frozen=True)
class Stream:
    """
    One topic's samples for K runs with identical timing.

    ``stamp_ns`` (n,) int64 header stamps and ``arrival_ns`` (n,) int64 receive times (None: equal
    to the stamps) are shared by the K runs; ``fields`` holds the sample values (see
    ``STREAM_KINDS``).
    """

    kind: str
    stamp_ns: np.ndarray
    arrival_ns: np.ndarray | None = None
    frame_id: str = ''
    child_frame_id: str = ''
    fields: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in STREAM_KINDS:
            raise ValueError(f'stream kind {self.kind!r}: expected one of {STREAM_KINDS}')

    @property
    def n(self) -> int:
        """Return the number of samples per run."""
        return len(self.stamp_ns)

    @property
    def arrivals_ns(self) -> np.ndarray:
        """Return the arrival times, the stamps when none were recorded."""
        return self.stamp_ns if self.arrival_ns is None else self.arrival_ns


STATE_VX, STATE_VY = 6, 7
"""Columns of the body-frame forward and lateral velocity in an estimate's ``state``."""


@dataclass(frozen=True)
class JudgeResult:
    """
    The judge's /odometry/filtered output for K runs.

    ``estimates``: one ``Stream`` of kind 'estimate' per group of runs that got the same output
    timing (one group unless the judge had to split the batch, e.g. by GPS validity);
    ``arrival_ns`` of each is the publication (timer tick) time. ``rows[k] = (group, row)``
    places run k. ``dropped``: {reason: count} of what the judge refused, for all runs together.
    """

    estimates: tuple
    rows: tuple
    dropped: Mapping[str, int] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """Return the number of runs."""
        return len(self.rows)

    def estimate(self, run: int) -> tuple[Stream, int]:
        """Return (the estimate stream holding run ``run``, its row in that stream)."""
        g, row = self.rows[run]
        return self.estimates[g], row

    def velocity(self, run: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (stamp_ns, vx, vy) of one run: the body-frame velocity the judge published."""
        s, row = self.estimate(run)
        state = s.fields['state']
        return s.stamp_ns, state[row, :, STATE_VX], state[row, :, STATE_VY]

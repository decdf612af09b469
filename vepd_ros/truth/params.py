# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Parameters of the ground-truth source, declared once for ``truth_node`` and the CLI."""

from vepd_ros.params import Param
from vepd_ros.truth.scenarios import canonical_scenario, SCENARIO_ALIASES, SCENARIOS


def scenario_list(value: str) -> list[str]:
    """Return the validated ``scenario`` parameter as canonical names, in order."""
    return [canonical_scenario(s.strip()) for s in value.split(',')]


PACE_PARAMS = [
    Param(
        'pace_nodes',
        0,
        'driving /clock: hold it until this many nodes report on /vepd/progress, then take a step '
        'only once each has taken every message published on its topics (lockstep, as vepd run; '
        '0: no pacing, /clock runs at time_scale)',
        low=0,
    ),
    Param(
        'pace_timeout_s',
        20.0,
        'a paced node silent for this long (s, wall clock) is no longer waited for, and messages '
        'a node has not taken after this long are given up as lost; both are named in a warning '
        'and the runs show it in their coverage',
        low=0.0,
        low_open=True,
    ),
]
"""Lockstep of the node driving /clock (truth_node, bag_player_node): ``nodes.lockstep.Pacer``."""


TRUTH_PARAMS = [
    Param(
        'scenario',
        'circle',
        'manoeuvre(s) driven through the bicycle model: one name or a comma-separated '
        'list, each run `runs` times',
        check=lambda v: all(
            SCENARIO_ALIASES.get(s.strip(), s.strip()) in SCENARIOS for s in v.split(',')
        ),
        check_msg='names from '
        + ', '.join(SCENARIOS)
        + ' (aliases '
        + ', '.join(SCENARIO_ALIASES)
        + ')',
    ),
    Param('duration_s', 30.0, 'length of one run (s)', low=0.0, low_open=True),
    Param('speed_mps', 0.0, 'nominal speed (m/s); 0 = the scenario default', low=0.0, high=5.0),
    Param(
        'rate_hz',
        100.0,
        'publication rate of truth odometry and IMU (Hz)',
        low=0.0,
        low_open=True,
        high=2000.0,
    ),
    Param(
        'time_scale',
        1.0,
        'sim seconds per wall second; != 1 makes this node drive /clock',
        low=0.0,
        low_open=True,
        high=1000.0,
    ),
    Param(
        'publish_clock',
        False,
        'drive /clock even at time_scale 1 (sim time starts at start_time_s)',
    ),
    Param('start_time_s', 1.0, 'sim time of the first sample when driving /clock (s)', low=0.0),
    Param(
        'seed',
        0,
        'study seed; run j of a scenario uses seeding.derive_seed(seed, "truth", scenario, j)',
        low=0,
    ),
    Param('runs', 1, 'repeated runs per scenario (each with its own seeded jitter)', low=1),
    Param(
        'gap_s', 2.0, 'pause between runs (s of sim time, nothing published but /clock)', low=0.0
    ),
    Param('frame_id', 'odom', 'world frame (ENU)'),
    Param('child_frame_id', 'base_link', 'body frame (FLU); also the Imu frame'),
    Param('shutdown_when_done', False, 'exit after the last run'),
    Param(
        'wait_for_subscribers',
        0,
        'hold the first run until /ground_truth/odometry has this many subscribers',
        low=0,
    ),
    Param(
        'wait_for_run_subscribers',
        0,
        'hold the first run until /ground_truth/run has this many subscribers '
        '(every node of a chain follows the run events: the chain is up)',
        low=0,
    ),
    *PACE_PARAMS,
    Param(
        'clock_tail_s',
        2.0,
        'shutdown_when_done: /clock keeps running this long after the last sample so '
        'every node can close its last run (s of sim time)',
        low=0.0,
    ),
]

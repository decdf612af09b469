# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
recorder_node: pairs ``odometry/filtered`` with a truth topic into runs, one file per run.

Wraps ``vepd_ros.runs.recorder.RecorderCore`` (pairing, segmentation, atomic writes: a SIGKILL
loses at most the run in progress, and a restarted recorder continues the batch after the highest
run on disk).
Segmentation (``segmentation``):
  ``events``    runs announced by truth_node on ``/ground_truth/run`` (scenario and run number
                from the event)
  ``manual``    services ``~/start`` and ``~/stop`` (std_srvs/Trigger)
  ``duration``  back-to-back runs of ``run_duration_s``
  ``motion``    a run per stretch of truth motion
  ``single``    one run from the first sample until shutdown (bag replay)
With ``events`` a run is recorded only from its start: a recorder (re)started in the middle of a
run skips it and says so (no half run under a final name); the latched events of earlier runs are
ignored.
Each finished run is announced as JSON on ``/vepd/runs`` (latched). Dropped messages (NaN, stamps
going backwards, wrong frame) are counted per reason, warned about (throttled) and published on
``/diagnostics``; a topic that never delivers is reported by name after ``topic_timeout_s``.
"""

from __future__ import annotations

from collections import deque
import importlib
import json
import math
import time

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_msgs.msg import String
from std_srvs.srv import Trigger
from vepd_ros.nodes.health import _steady_clock, DiagnosticsPublisher, DropCounter, TopicWatchdog
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.params import declare_params
from vepd_ros.nodes.qos import EVENT_QOS
from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC
from vepd_ros.nodes.stamps import stamp_to_ns
from vepd_ros.params import Param, ParameterError
from vepd_ros.ros_graph import truth_type_hint
from vepd_ros.runs.recorder import RecorderCore
from vepd_ros.runs.safety import claim_graph_output
from vepd_ros.streams import TOPIC_GROUND_TRUTH, TOPIC_RUNS

RUNS_TOPIC = TOPIC_RUNS
JOIN_TOLERANCE_S = 1.0
"""
Segmentation events: how late a run's first sample may come after its start stamp (s).

segmentation events: a run whose first sample here comes later than this after its start stamp was
joined mid-way (the recorder was restarted during it) and is not recorded: no half run under a
final name. Between runs, samples this recent are held back for a start event that comes after
them.
"""


def _ned_to_enu(v):
    return v.y, v.x  # (east, north) from (north, east)


# truth_type → (message type, function msg → (vx, vy)). Body-frame (x forward, y left) where the
# message carries a body twist; (east, north) for INS messages in a world frame — the speed is the
# same either way.
TRUTH_TYPES = {
    'nav_msgs/msg/Odometry': lambda m: (m.twist.twist.linear.x, m.twist.twist.linear.y),
    'geometry_msgs/msg/TwistStamped': lambda m: (m.twist.linear.x, m.twist.linear.y),
    'geometry_msgs/msg/TwistWithCovarianceStamped': lambda m: (
        m.twist.twist.linear.x,
        m.twist.twist.linear.y,
    ),
    'sbg_driver/msg/SbgGpsVel': lambda m: _ned_to_enu(m.velocity),
    'sbg_driver/msg/SbgEkfNav': lambda m: _ned_to_enu(m.velocity),
}
SEGMENTATIONS = ('events', 'manual', 'duration', 'motion', 'single')

RECORDER_PARAMS = [
    Param(
        'side',
        'sim',
        'real (the reference batch) or sim (a model under test)',
        choices=('real', 'sim'),
    ),
    Param('label', 'sim', 'batch label (folder Sim/<label>; ignored for side real)'),
    Param('model', '', 'GPS model name recorded in the sidecar'),
    Param('scenario', 'run', 'scenario of the runs (segmentation events: taken from each event)'),
    Param('output_dir', 'vepd_out', 'root of the batch layout'),
    Param(
        'estimate_topic',
        'odometry/filtered',
        'the judge output (nav_msgs/Odometry, twist in base_link)',
    ),
    Param('truth_topic', TOPIC_GROUND_TRUTH, 'ground-truth topic'),
    Param(
        'truth_type',
        'nav_msgs/msg/Odometry',
        'message type of truth_topic',
        choices=tuple(TRUTH_TYPES),
    ),
    Param(
        'truth_frame_id', '', 'expected header.frame_id of truth (empty: any); others are dropped'
    ),
    Param(
        'velocity',
        'speed',
        'scalar velocity the runs are scored on',
        choices=('speed', 'vx', 'vector'),
    ),
    Param('segmentation', 'events', 'how runs are delimited', choices=SEGMENTATIONS),
    Param(
        'run_duration_s', 20.0, 'run length for segmentation duration (s)', low=0.0, low_open=True
    ),
    Param('max_runs', 0, 'stop recording after this many runs (0: no limit)', low=0),
    Param(
        'topic_timeout_s',
        10.0,
        'report a topic that has delivered nothing after this long (s, wall clock)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'estimate_rate_hz',
        0.0,
        "nominal rate of the estimates (the judge's frequency) for the run coverage; "
        "0: taken from the run's stamps",
        low=0.0,
    ),
    Param(
        'truth_rate_hz',
        0.0,
        "nominal rate of the truth topic for the run coverage; 0: taken from the run's stamps",
        low=0.0,
    ),
    Param(
        'end_after_quiet_s',
        0.0,
        'segmentation single: close the run once no message has come for this long '
        '(s, wall clock; the bag has ended); 0: only at shutdown',
        low=0.0,
    ),
]


def message_class(type_name: str):
    """'pkg/msg/Type' → the message class (no rosidl_runtime_py in the pip runtime)."""
    pkg, _, name = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.msg'), name)


class RecorderNode(Node):

    def __init__(self, **kwargs):
        super().__init__('recorder', **kwargs)
        self.p = p = declare_params(self, RECORDER_PARAMS)
        claim_graph_output(p['output_dir'])  # before anything is written (exit 2 when refused)
        try:
            truth_cls = message_class(p['truth_type'])
        except (ImportError, AttributeError) as exc:
            raise ParameterError(
                'truth_type', p['truth_type'], truth_type_hint(p['truth_type'], TRUTH_TYPES)
            ) from exc
        self.truth_velocity = TRUTH_TYPES[p['truth_type']]
        self.drops = DropCounter(self)
        self.pub_runs = self.create_publisher(String, RUNS_TOPIC, EVENT_QOS)
        seg = p['segmentation']
        core_seg = {'events': 'manual', 'single': 'manual'}.get(seg, seg)
        self.core = RecorderCore(
            p['output_dir'],
            side=p['side'],
            label=p['label'] if p['side'] == 'sim' else None,
            scenario=p['scenario'],
            segmentation=core_seg,
            duration_s=p['run_duration_s'] if seg == 'duration' else None,
            max_runs=p['max_runs'] or None,
            meta={
                'model': p['model'],
                'source_topics': {
                    'estimate': self.resolve_topic_name(p['estimate_topic']),
                    'truth': p['truth_topic'],
                },
                'truth_type': p['truth_type'],
                'velocity': p['velocity'],
                'source': 'recorder_node',
            },
            on_event=self._on_run,
            rates_hz={'se': p['estimate_rate_hz'], 'gt': p['truth_rate_hz']},
        )
        if seg == 'single':
            self.core.start(None)
        self.counts = {'estimate': 0, 'truth': 0}  # accepted (finite, right frame)
        self.received = {'estimate': 0, 'truth': 0}  # every message, good or bad
        self.joined_late = 0  # runs seen only part-way (restarted mid-run)
        self.events_taken = 0  # run events taken (latched ones included)
        self._skipped: dict[
            tuple, tuple[float, float]
        ] = {}  # (scenario, run) -> (start, first sample here)
        self._pending_events: list[dict] = []
        self._held: deque = deque()  # (kind, t, vx, vy) not yet given to the core (events)
        if seg == 'events':
            # Created first: the executor serves ready subscriptions in creation order, so a start
            # event that arrives together with its run's first samples (truth_node sends them back
            # to back) is seen first.
            self.create_subscription(String, RUN_EVENTS_TOPIC, self._on_event, EVENT_QOS)
        self.create_subscription(
            Odometry, p['estimate_topic'], self._on_estimate, QoSProfile(depth=100)
        )
        self.create_subscription(
            truth_cls, p['truth_topic'], self._on_truth, QoSProfile(depth=200)
        )
        self.create_service(Trigger, '~/start', self._srv_start)
        self.create_service(Trigger, '~/stop', self._srv_stop)
        self.create_timer(0.1, self._on_stale_check)
        self._last_input_wall = None
        if seg == 'single' and p['end_after_quiet_s'] > 0:
            self.create_timer(0.2, self._on_quiet_check, clock=_steady_clock())
        self.diagnostics = DiagnosticsPublisher(self, self.drops, self._diagnostic_values)
        self.watchdog = TopicWatchdog(self, p['topic_timeout_s'])
        for kind, topic in (('estimate', p['estimate_topic']), ('truth', p['truth_topic'])):
            self.watchdog.watch(
                self.resolve_topic_name(topic), lambda kind=kind: self.received[kind] > 0
            )
        self.get_logger().info(
            f'recorder: {p["side"]}/{p["label"]} {p["estimate_topic"]} vs {p["truth_topic"]} '
            f'({p["truth_type"]}), segmentation {seg} → {p["output_dir"]}'
        )

    # -- input
    # --------------------------------------------------------------------------------------
    def _on_estimate(self, msg: Odometry):
        self.received['estimate'] += 1
        v = (msg.twist.twist.linear.x, msg.twist.twist.linear.y)
        self._feed('estimate', msg, v)

    def _on_truth(self, msg):
        self.received['truth'] += 1
        if self.p['truth_frame_id'] and msg.header.frame_id != self.p['truth_frame_id']:
            return self.drops.drop(
                'wrong_frame',
                f"{self.p['truth_topic']}: frame '{msg.header.frame_id}', "
                f"expected '{self.p['truth_frame_id']}'",
            )
        self._feed('truth', msg, self.truth_velocity(msg))

    def _feed(self, kind: str, msg, v):
        self._last_input_wall = time.monotonic()
        t = stamp_to_ns(msg.header.stamp) * 1e-9
        if not all(math.isfinite(x) for x in v):
            return self.drops.drop('non_finite', f'{kind} velocity {v} at {t:.3f} s')
        self.counts[kind] += 1
        if self.p['segmentation'] == 'events':
            self._held.append((kind, t, float(v[0]), float(v[1])))
            return self._drain()
        self._to_core(kind, t, float(v[0]), float(v[1]))

    def _to_core(self, kind: str, t: float, vx: float, vy: float):
        before = self._core_drops()
        (self.core.feed_estimate if kind == 'estimate' else self.core.feed_truth)(t, vx, vy)
        if (
            self._core_drops() > before
        ):  # the core refused it (stamp not after the previous one, ...)
            self.drops.drop(
                'rejected_by_recorder', f'{kind} at {t:.3f} s (see /diagnostics for the reason)'
            )

    def _drain(self):
        """
        Pass the held samples to the core in arrival order (segmentation events).

        Segmentation events: pass the held samples to the core in arrival order, applying start
        events at their stamps (a run starts at its stamp, whichever stream gets there first).
        While no run is being recorded, the samples of the last ``JOIN_TOLERANCE_S`` are held back:
        events and samples travel on different topics with no order between them, so a start event
        may come after its run's first samples.
        """
        held = self._held
        while held:
            kind, t, vx, vy = held[0]
            self._apply_events(t)
            if not self.core.recording and held[-1][1] - t < JOIN_TOLERANCE_S:
                return
            held.popleft()
            self._to_core(kind, t, vx, vy)

    def _core_drops(self) -> int:
        # before_start: a sample of the gap before a run that arrives after the run's first samples
        # (two topics, no order between them); it is outside the run, not bad input
        return sum(
            v
            for k, v in self.core.totals.items()
            if '_dropped_' in k and not k.endswith('before_start')
        )

    # -- segmentation
    # -------------------------------------------------------------------------------
    def _on_event(self, msg: String):
        self.events_taken += 1
        try:
            e = json.loads(msg.data)
            e['stamp_s'] = int(e['stamp_ns']) * 1e-9
        except (ValueError, KeyError, TypeError) as exc:
            return self.drops.drop('bad_run_event', f'{RUN_EVENTS_TOPIC}: {exc}')
        if e.get('event') == 'end':
            key = (e.get('scenario'), e.get('run'))
            for s in self._pending_events:
                if (s.get('scenario'), s.get('run')) == key:
                    s['end_s'] = e[
                        'stamp_s'
                    ]  # its end came before its first sample was processed here
                    return
            if key in self._skipped:
                start, first = self._skipped.pop(key)
                self._not_recorded(key, start, first, e['stamp_s'])
                return
            if self.core.recording:
                self.core.stop(
                    e['stamp_s']
                )  # closes once both streams pass the end (or it goes stale)
            return
        if e.get('event') != 'start':
            return
        self._pending_events.append(e)
        self._pending_events.sort(key=lambda ev: ev['stamp_s'])
        self._drain()  # samples of this run that came before its start event

    def _apply_events(self, t: float):
        """
        Apply the start events due at sample time t (before that sample is fed).

        A run is recorded only from its start: one whose first sample here comes more than
        ``JOIN_TOLERANCE_S`` after its start is skipped. The latched events a restarted recorder
        receives interleave with live samples, so whether a skipped run was over already (quiet) or
        partly seen here (a warning: a run lost to the restart) is decided when its end event
        comes.
        """
        pend = self._pending_events
        while pend and pend[0]['stamp_s'] <= t:
            e = pend.pop(0)
            if e['event'] == 'start':
                if self.core.recording:
                    self.core.stop()
                name = f'{e.get("scenario")} #{e.get("run")}'
                if e.get('end_s') is not None and t > e['end_s']:
                    self.get_logger().debug(f'run {name}: over before this recorder saw it')
                    continue
                if t - e['stamp_s'] > JOIN_TOLERANCE_S:
                    key = (e.get('scenario'), e.get('run'))
                    if e.get('end_s') is not None:
                        self._not_recorded(key, e['stamp_s'], t, e['end_s'])
                    else:
                        self._skipped[key] = (e['stamp_s'], t)
                    continue
                self.core.scenario = e['scenario']
                self.core.run_j = int(e['run'])
                self.core.meta.update(seed=e.get('seed'), study_seed=e.get('study_seed'))
                self.core.start(e['stamp_s'])
                if e.get('end_s') is not None:
                    self.core.stop(e['end_s'])

    def _not_recorded(self, key, start: float, first: float, end: float):
        """
        Skip a run whose first sample here came late, warning when part of it was lost.

        A run skipped because its first sample here came late: a warning if part of it came here (a
        run lost to a (re)start mid-run), quiet if it was over before (latched events of earlier
        runs).
        """
        if end >= first:
            self.joined_late += 1
            self.get_logger().warning(
                f'run {key[0]} #{key[1]} not recorded: its first sample here came '
                f'{first - start:.2f} s after its start (recorder restarted mid-run?)'
            )
        else:
            self.get_logger().debug(f'run {key[0]} #{key[1]}: over before this recorder saw it')

    def _srv_start(self, request, response):
        self.core.start(None)
        response.success, response.message = True, f'recording run of {self.core.scenario}'
        return response

    def _srv_stop(self, request, response):
        ev = self.core.stop()
        response.success = ev is not None
        response.message = json.dumps(ev) if ev else 'no run in progress'
        return response

    # -- output
    # -------------------------------------------------------------------------------------
    def _on_run(self, ev: dict):
        ev = {**ev, 'model': self.p['model']}
        text = f'run {ev.get("status")}: {ev.get("path", ev.get("reason"))}'
        if not self.context.ok():
            # shutting down (a signal): the run is on disk; nobody is left to tell, and the
            # logger's /rosout publisher is gone with the context
            print(f'[INFO] [{self.get_name()}]: {text}', flush=True)
            return
        self.get_logger().info(text)
        try:
            self.pub_runs.publish(String(data=json.dumps(ev, default=float)))
        except Exception:  # noqa: BLE001 - the context went down between the check and the publish
            if self.context.ok():
                raise

    def _on_quiet_check(self):
        """
        Write the single run once the input has stopped (segmentation single).

        Segmentation single: the input has stopped (the bag ended): the run is complete, write it
        now.
        """
        if (
            self.core.recording
            and self._last_input_wall is not None
            and time.monotonic() - self._last_input_wall >= self.p['end_after_quiet_s']
        ):
            self.get_logger().info(
                f'no input for {self.p["end_after_quiet_s"]:g} s: the run is complete'
            )
            self.core.flush()

    def _on_stale_check(self):
        now = self.get_clock().now().nanoseconds * 1e-9
        if now > 0:
            self.core.close_if_stale(now)

    def _diagnostic_values(self) -> dict:
        return {
            'estimate_messages': self.counts['estimate'],
            'truth_messages': self.counts['truth'],
            'runs_joined_late': self.joined_late,
            'run_events': self.events_taken,
            **self.core.totals,
        }

    def destroy_node(self):
        # 'single' (a bag): the end of input ends the run, so it is written. In every other mode a
        # run still in progress at shutdown is incomplete and is not written: no half run ever
        # appears under a final name.
        if self.p['segmentation'] == 'single' and self.core.recording:
            self.core.flush()
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(RecorderNode, args=args, params=RECORDER_PARAMS)


if __name__ == '__main__':
    raise SystemExit(main())

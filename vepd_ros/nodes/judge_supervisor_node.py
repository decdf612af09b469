# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
judge_supervisor_node: one judge chain (ekf + navsat processes) per run, started fresh each time.

robot_localization has no "forget everything" switch and its services cannot give a fresh state
(docs/judge.md), so under ``judge:=robot_localization`` every run is judged by a newly started
``ekf_node`` + ``navsat_transform_node``, as the offline study and the built-in judge's
``reset_on_run_events`` do. The executables are parameters (``chain``), so the same supervisor also
runs the built-in ``judge_node`` + ``navsat_node`` (that is how the test checks it).

Sequence, on sim time (truth_node drives /clock and paces it on ``/vepd/progress``):
1. start the chain; once it is up (``ready_publishers`` / ``ready_subscribers`` matched), subscribe
   to the run events (truth_node waits for that subscription before run 1); the report names the
   chain's own vepd_ros processes (``pace_requires``), so /clock also waits for their first
   reports, which tell the pacer what they subscribe to;
2. at each run ``end`` event, once the clock is ``restart_delay_s`` past the end (the last
   estimates are out), stop the chain (SIGINT, then SIGKILL after ``stop_timeout_s``) and start a
   fresh one; meanwhile this node reports ``hold`` (``pace_hold``) on ``/vepd/progress``, so
   truth_node's lockstep holds /clock until the fresh chain is up and the next run's data flows.
On exit (SIGINT/SIGTERM, or the launch shutting down) the chain is stopped: no orphan process.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import time

from rclpy.node import Node
from std_msgs.msg import String
from vepd_ros.nodes.health import _steady_clock, DropCounter
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.params import declare_params
from vepd_ros.nodes.qos import EVENT_QOS
from vepd_ros.nodes.run_events import RUN_EVENTS_TOPIC
from vepd_ros.params import Param, ParameterError
# PACKAGE: whose nodes report on /vepd/progress (run_node)
from vepd_ros.params_file import PACKAGE, package_executable
from vepd_ros.ros_graph import decode_chain_process
from vepd_ros.streams import NS

_LIBC = ctypes.CDLL(None, use_errno=True)  # resolved before any fork: nothing to load after it
_PR_SET_PDEATHSIG = 1

PARAMS = [
    Param(
        'chain',
        [''],
        'the judge chain, one JSON object per process: {"package": P, "executable": E, "args": '
        '[--ros-args ...]} (the executable is found at <prefix of P>/lib/P/E, as ros2 run does)',
    ),
    Param('ready_publishers', [''], 'topics the chain publishes: it is up once each has one'),
    Param('ready_subscribers', [''], 'topics the chain subscribes: it is up once each has one'),
    Param(
        'restart_delay_s',
        0.5,
        'after a run ends, sim seconds to wait before the chain is replaced (its last estimates '
        'go out first; keep it below truth_node gap_s)',
        low=0.0,
    ),
    Param(
        'stop_timeout_s',
        10.0,
        'wall seconds a stopped process has to exit before SIGKILL',
        low=0.0,
        low_open=True,
    ),
    Param(
        'start_timeout_s',
        120.0,
        'wall seconds a started chain has to come up (ready_publishers and ready_subscribers '
        'matched) before the supervisor gives up and exits with status 1',
        low=0.0,
        low_open=True,
    ),
]


def exit_status_text(returncode: int) -> str:
    """
    Say what a process's exit status means, for the error naming a chain process that ended.

    127 is the dynamic loader's (or a shell's) "not found": a shared library or the executable is
    missing; a negative status is the signal that ended the process.
    """
    if returncode < 0:
        try:
            return f'killed by {signal.Signals(-returncode).name}'
        except ValueError:
            return f'killed by signal {-returncode}'
    if returncode == 127:
        return (
            'exited with status 127: a shared library or the executable was not found '
            '(the loader names it above)'
        )
    return f'exited with status {returncode}'


def _chain_commands(specs: list) -> list[tuple[str, list[str]]]:
    """Parse the ``chain`` parameter into (package, argument vector) (resolved like ros2 run)."""
    commands = []
    for text in (s for s in specs if s):
        package, executable, args = decode_chain_process(text)
        try:
            path = package_executable(package, executable)
        except LookupError as exc:
            raise ParameterError('chain', text, f'an installed executable ({exc})') from None
        commands.append((package, [str(path), *args]))
    if not commands:
        raise ParameterError('chain', specs, 'at least one process')
    return commands


def _die_with_parent() -> None:
    """
    In a chain process, before exec: be SIGKILLed when the supervisor dies (Linux prctl).

    PR_SET_PDEATHSIG: a supervisor that is itself killed (launch's SIGKILL after its SIGTERM
    timeout, an out-of-memory kill) takes its chain with it instead of leaving an ekf and a navsat
    running on the domain (seen once in CI: a supervisor SIGKILLed 15 s after Ctrl-C, its navsat
    left behind). The supervisor starts its chains from its main thread, whose end the signal
    follows.
    """
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def chain_vouches(packages: list[str], ready_subscribers: list[str], sim_time: bool) -> dict:
    """
    Return the subscriptions to vouch for on /vepd/progress: {topic (as given): count}.

    A chain with processes that do not report (any package but vepd_ros): one subscription per
    ``ready_subscribers`` topic, and one /clock subscription per such process on sim time. A chain
    of vepd_ros nodes vouches for nothing: they report their own.
    """
    silent = sum(package != PACKAGE for package in packages)
    if not silent:
        return {}
    vouches = dict.fromkeys(ready_subscribers, 1)
    if sim_time:
        vouches['/clock'] = silent
    return vouches


class JudgeSupervisorNode(Node):

    def __init__(self, node_name: str = 'judge_supervisor', **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = declare_params(self, PARAMS)
        self.commands = _chain_commands(self.p['chain'])
        self.ready_pubs = [t for t in self.p['ready_publishers'] if t]
        self.ready_subs = [t for t in self.p['ready_subscribers'] if t]
        self.drops = DropCounter(self)
        self.procs: list[subprocess.Popen] = []
        self.chains_started = 0
        self._restart_at_ns: int | None = None  # sim time at which the chain is replaced
        self._started_at = time.monotonic()
        self._runs_sub = None
        self._start_chain()  # pace_hold, reported on /vepd/progress: /clock waits till it is up
        self.create_timer(0.05, self._on_timer, clock=_steady_clock())
        # on sim time: the restart is due within the step that reaches it, before the node reports
        self.create_timer(0.01, self._on_sim_tick)

    # -- the chain ------------------------------------------------------------------------------
    def _counts_zero(self) -> bool:
        # the old pair is gone once its outputs have no publisher: only the pair publishes them,
        # and each of its processes has one, so its participants (and every endpoint of theirs)
        # have left discovery. Its inputs are no such test: the chain's recorder also subscribes
        # odometry/filtered, so waiting for no subscriber there never ends (chain #2 never started)
        return all(self.count_publishers(t) == 0 for t in self.ready_pubs)

    def _chain_up(self) -> bool:
        return all(self.count_publishers(t) >= 1 for t in self.ready_pubs) and all(
            self.count_subscribers(t) >= 1 for t in self.ready_subs
        )

    def _start_chain(self) -> None:
        self.procs = [
            subprocess.Popen(cmd, preexec_fn=_die_with_parent) for _, cmd in self.commands
        ]
        self.chains_started += 1
        self._starting = True
        self._started_at = time.monotonic()
        self.pace_hold = True  # the first chain too (run 1 differed from vepd run without it)
        # and once released, /clock waits for the chain's own first reports too: before them the
        # pacer does not know its subscriptions, so a step could go out to a judge that has not
        # matched its inputs yet (robot_localization's nodes do not report: the chain being up
        # is all there is for them)
        self.pace_requires = [
            proc.pid
            for proc, (package, _) in zip(self.procs, self.commands)
            if package == PACKAGE
        ]
        # robot_localization's processes report nothing, so the pacer would not know they read
        # /clock and the sensor topics: their subscriptions are vouched for here, and each step
        # waits until the publishers there (truth_node's /clock, the noise nodes') have matched
        # them. Without it a first /clock or fix sent before that match was lost to the real
        # chain, and run 1 started late under judge:=robot_localization (issue 23)
        self.pace_vouches = {
            self.resolve_topic_name(t): n
            for t, n in chain_vouches(
                [package for package, _ in self.commands],
                self.ready_subs,
                self.get_parameter('use_sim_time').value,
            ).items()
        }

    def _stop_chain(self) -> None:
        if not self.procs:
            return
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + self.p['stop_timeout_s']
        for p in self.procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # one line per chain: with 'judge chain #N up' it shows one pair at a time, all gone
        self.get_logger().info(
            f'judge chain #{self.chains_started} stopped: '
            + ', '.join(f'{os.path.basename(p.args[0])} {p.returncode}' for p in self.procs)
        )
        self.procs = []

    # -- run events -----------------------------------------------------------------------------
    def _on_run_event(self, msg: String) -> None:
        try:
            e = json.loads(msg.data)
            if e.get('event') != 'end' or int(e['index']) + 1 >= int(e['total']):
                return  # the last run's chain stays until the launch ends
            end_ns = int(e['stamp_ns'])
        except (ValueError, KeyError, TypeError) as exc:
            return self.drops.drop('bad_run_event', f'{RUN_EVENTS_TOPIC}: {exc}')
        self._restart_at_ns = end_ns + int(round(self.p['restart_delay_s'] * NS))

    def _on_sim_tick(self) -> None:
        now = self.get_clock().now().nanoseconds
        if self._restart_at_ns is not None and now >= self._restart_at_ns:
            self._restart_at_ns = None
            self.pace_hold = True
            self._stop_chain()
            self._waiting_gone = True

    def _fail(self, why: str) -> None:
        """End this node with status 1 naming ``why``: the launch then ends non-zero."""
        self.get_logger().error(f'judge chain #{self.chains_started}: {why}')
        self.exit_status = 1
        self._stop_chain()
        self.context.try_shutdown()  # run_node returns exit_status: the launch shuts down

    def _on_timer(self) -> None:
        # a chain process that ends by itself (whatever its status: robot_localization's nodes
        # run until stopped) leaves the chain without a judge: the runs would wait for it forever
        ended = [p for p in self.procs if p.poll() is not None]
        if ended and self.context.ok():  # (not Ctrl-C reaching the chain and this node at once)
            p = ended[0]
            return self._fail(
                f'process {os.path.basename(p.args[0])} {exit_status_text(p.returncode)} '
                f'({p.args[0]}); the runs cannot be judged'
            )
        if self._starting and not getattr(self, '_waiting_gone', False):
            waited = time.monotonic() - self._started_at
            if waited > self.p['start_timeout_s'] and not self._chain_up():
                missing = [t for t in self.ready_pubs if self.count_publishers(t) < 1] + [
                    t for t in self.ready_subs if self.count_subscribers(t) < 1
                ]
                return self._fail(
                    f'not up after {waited:.0f} s (start_timeout_s): nothing on '
                    + ', '.join(missing)
                )
        if getattr(self, '_waiting_gone', False):
            if not self._counts_zero():
                return
            self._waiting_gone = False
            self._start_chain()
        if self._starting and self._chain_up():
            self._starting = False
            self.pace_hold = False
            self.get_logger().info(f'judge chain #{self.chains_started} up')
            if self._runs_sub is None:  # truth_node waits for this before run 1
                self._runs_sub = self.create_subscription(
                    String, RUN_EVENTS_TOPIC, self._on_run_event, EVENT_QOS
                )

    def destroy_node(self):
        self._stop_chain()
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(JudgeSupervisorNode, args, params=PARAMS)


if __name__ == '__main__':
    raise SystemExit(main())

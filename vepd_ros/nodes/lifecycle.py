# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A node's life as a process: start, spin until a signal, clean up, exit with a status.

``run_node`` is every node's ``main``: ``--help`` without starting ROS, a bad parameter as exit 2,
SIGINT/SIGTERM as a clean exit 0 (vepd_ros's own handlers: ``spinning`` sees the signal within
``SPIN_WAKE_S``), a node on sim time spun by ``spin_reporting`` (it reports its traffic to the
lockstep), and a teardown that rclpy may not block for long.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from typing import Callable, Iterable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from vepd_ros.nodes.lockstep import PROGRESS_HEARTBEAT_S, run_until_idle, TrafficCounter
from vepd_ros.nodes.params import node_help, wants_help
from vepd_ros.params import Param, ParameterError

SHUTDOWN_STACKS_AFTER_S = 4.0
"""A node still shutting down after this long prints its threads' stacks (launch waits 5 s)."""

RCL_TEARDOWN_LIMIT_S = 3.0
"""
The longest a node's process waits for rclpy to tear its entities down at exit (s, wall clock).

Seen under load (a Ctrl-C'd launch): ``destroy_node`` blocked in ``rclpy.Service.destroy`` (Fast
DDS deleting the service's entities) until launch SIGKILLed the node 15 s later, and the launch
reported it as died (-9). The node's own work is done by then (files written, chain stopped); the
teardown only tells the graph the node left, which its process ending tells too. A process blocked
in rclpy's own frames this long says so in one line and exits with the status it had; time spent in
vepd_ros's code (a recorder writing its run, a supervisor stopping its chain) does not count.
"""

SPIN_WAKE_S = 0.5
"""
The longest a node's executor waits in rcl before it returns to Python (s, wall clock).

Python runs signal handlers in the main thread between bytecodes only; rcl_wait does not return
on a signal. Waking this often, a SIGINT/SIGTERM takes effect within this time, whatever rclpy's
own handler does with it.
"""


_STOP = []  # a SIGINT/SIGTERM was received (its number): the spin loop ends, the node cleans up


def _request_stop(signum, frame):
    """Note a SIGINT or SIGTERM: the spin loop ends at its next wake-up (``run_node`` exits 0)."""
    _STOP.append(signum)


def _set_signals(handler) -> None:
    """
    Handle SIGINT and SIGTERM with ``handler``, instead of rclpy's handler.

    While a node runs, ``_request_stop``. Measured (issue 12): rclpy's handler, which run_node
    used before, sometimes swallowed a SIGINT (a node under load went on spinning until SIGTERM;
    faulthandler showed the signal arrive and the main thread waiting in rcl). Python's own
    handler always reaches the main thread, which wakes every ``SPIN_WAKE_S``. It only sets a flag:
    an exception raised from a handler inside rclpy's C++ calls comes out as another error (a
    RuntimeError from pybind11), a traceback. Once the node shuts down, ``signal.SIG_IGN``: a
    second Ctrl-C / SIGTERM must not interrupt the cleanup (that printed a KeyboardInterrupt
    traceback from destroy_node and exited -2).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread (in-process tests)
            pass


def spinning(executor) -> bool:
    """Return whether ``executor`` should go on spinning: its context is up, no signal came."""
    return executor.context.ok() and not _STOP


def run_node(
    factory: Callable[..., Node],
    args=None,
    *,
    params: Iterable[Param] | None = None,
    help_note: str = '',
) -> int:
    """
    Run a node as a standard ``main`` and return its exit status.

    Standard ``main``: init, build the node, spin on a SingleThreadedExecutor, exit 0 on
    SIGINT/SIGTERM (once or repeatedly, in any phase: no traceback; this function's own handlers,
    not rclpy's). Run as a process (``args`` None), it ends the process with that status once the
    node is cleaned up. A ``ParameterError`` at start prints the parameter, value and what was
    expected, and exits 2 (the node never starts with invalid parameters). ``-h``/``--help``
    prints the node's parameters (``params``, the specs it declares) and exits 0 without starting
    ROS.
    """
    argv = sys.argv if args is None else args
    if wants_help(argv):
        module = sys.modules.get(getattr(factory, '__module__', ''), None)
        sys.stdout.write(
            node_help(
                os.path.basename(argv[0]).removesuffix('.py') if argv else 'node',
                getattr(module, '__doc__', None),
                params,
                help_note,
            )
        )
        return 0
    status = _run_node(factory, args)
    faulthandler.cancel_dump_traceback_later()
    if args is None:
        # a process of its own (a console script): its cleanup has run; skip the interpreter's
        # finalization, which was seen to hang with no Python frame left (issue 12: launch then
        # SIGKILLs the node)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def _run_node(factory: Callable[..., Node], args) -> int:
    """Run ``run_node``'s node: init, build, spin, clean up; return the exit status."""
    from rclpy.signals import SignalHandlerOptions

    node = None
    status = 1  # what the process exits with, should rclpy's teardown hang (an exception: 1)
    _set_signals(_request_stop)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        try:
            node = factory()
        except ParameterError as exc:
            print(f'[ERROR] {exc}', file=sys.stderr)
            status = 2
            return status
        from vepd_ros.nodes.guard import watch_inputs

        watch_inputs(node)  # a second graph on this domain stops the node (exit 1)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            if node.get_parameter('use_sim_time').value:
                # on a /clock that truth_node may pace (pace_nodes): say what was taken and sent
                spin_reporting(executor, TrafficCounter(node))
            else:
                while spinning(executor):
                    executor.spin_once(timeout_sec=SPIN_WAKE_S)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        except Exception:
            # SIGINT/SIGTERM shut the context down asynchronously; a callback that was mid-publish
            # then fails with "context is invalid". That is a clean shutdown, not a crash.
            if node.context.ok():
                raise
        if getattr(node, 'foreign_publisher', None):
            status = 1
        else:
            status = getattr(node, 'exit_status', 0)  # a node that ended on a failure says so
        return status
    except KeyboardInterrupt:
        status = 0
        return status  # interrupted while starting
    except Exception:
        if rclpy.ok():
            raise
        status = 0
        return status  # a signal shut the context down during construction
    finally:
        try:
            _set_signals(signal.SIG_IGN)
            if args is None:  # a process of its own (run_node then ends it with os._exit)
                _exit_if_rclpy_teardown_hangs(status)
            # a shutdown that hangs anywhere else (signals are ignored from here on, so launch
            # ends up SIGKILLing the node) leaves every thread's stack on stderr, in the launch log
            faulthandler.dump_traceback_later(SHUTDOWN_STACKS_AFTER_S)
            if node is not None:
                try:
                    node.destroy_node()
                except Exception:  # noqa: BLE001 - the context is gone; nothing left to free
                    pass
            rclpy.try_shutdown(uninstall_handlers=False)
        except KeyboardInterrupt:  # a signal that came before the handlers were replaced
            pass


def _exit_if_rclpy_teardown_hangs(status: int) -> None:
    """
    Watch the main thread's cleanup; end the process once rclpy's teardown has blocked too long.

    A daemon thread samples the main thread's innermost frame every 0.1 s: time spent
    continuously in rclpy's own modules counts toward ``RCL_TEARDOWN_LIMIT_S``; then it prints
    where the teardown blocked and ends the process with ``status`` (``os._exit``: the node's own
    work is done). The thread dies with the process when the cleanup finishes normally.
    """
    import threading
    import time

    main = threading.main_thread().ident
    rclpy_dir = os.path.dirname(rclpy.__file__) + os.sep

    def watch():
        blocked_since = None
        while True:
            time.sleep(0.1)
            frame = sys._current_frames().get(main)
            if frame is None:
                return
            now = time.monotonic()
            if not frame.f_code.co_filename.startswith(rclpy_dir):
                blocked_since = None
                continue
            blocked_since = blocked_since or now
            if now - blocked_since >= RCL_TEARDOWN_LIMIT_S:
                where = f'{frame.f_code.co_name} ({frame.f_code.co_filename}:{frame.f_lineno})'
                sys.stderr.write(
                    f'[WARN] rclpy teardown blocked {RCL_TEARDOWN_LIMIT_S:g} s in {where}; '
                    f'the node has done its work: exiting with status {status} without it\n'
                )
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)

    threading.Thread(target=watch, name='vepd-teardown-watch', daemon=True).start()


def spin_reporting(executor, counter: TrafficCounter) -> None:
    """
    Spin ``executor`` as ``spin()`` does, and ``counter.report()`` each time it has nothing ready.

    Idle as ``run_until_idle`` means it, so the counts reported are final for this step; an idle
    node then waits up to half a ``PROGRESS_HEARTBEAT_S`` for work before reporting again.
    """
    from rclpy.executors import TimeoutException

    first = None
    while True:
        run_until_idle(executor, lambda: spinning(executor), first)
        if not spinning(executor):
            return
        counter.report()
        try:
            first, _, _ = executor.wait_for_ready_callbacks(timeout_sec=PROGRESS_HEARTBEAT_S / 2)
        except TimeoutException:
            first = None

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
``vepd run GRAPH [name:=value ...] [--json]``: a vepd_ros graph without launch_ros.

This module parses the arguments and prints; the runners are ``vepd_ros.graph``'s. The nodes of
``vepd_ros.ros_graph.build_graph`` (the description the launch files use) are composed in one
process on a SingleThreadedExecutor (``--processes``: one process per node, started with the same
``--ros-args``), with the built-in judge where robot_localization is absent. The run ends when the
evaluator publishes its result; ``--json`` prints that result in the ``vepd evaluate`` shape.

Made to survive a slow machine and a busy network:
- no wall budget: the run stops only when sim time and the count of finished runs both stand still
  for ``--stall-timeout`` seconds (default 60), naming what stalled (``--timeout`` adds an overall
  limit);
- its own DDS domain (``vepd_ros.graph.domain``) unless ROS_DOMAIN_ID or ``--domain-id`` chooses
  one;
- a publisher on its topics that is not one of its nodes stops it at once
  (``vepd_ros.nodes.guard``);
- exit 1 unless the result is complete (C2), every model scored and no metric NaN
  (``result_problems``). Progress (runs done of total, sim-time rate, time left) goes to standard
  error on a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
import textwrap

from vepd_ros.graph.monitor import result_problems, RunError, STALL_S
from vepd_ros.graph.runner import run_graph, say
from vepd_ros.params import ParameterError, parse_assignments
from vepd_ros.ros_graph import build_graph, GRAPH_ARGS, typed_args


EXAMPLES = """examples:
  vepd run sim_judge k:=2 models:=ch_gauss,ch_rw scenarios:=circle duration_s:=8 output_dir:=sj
  vepd run sim_judge --help          # sim_judge's arguments, with descriptions and defaults
  ROS_DOMAIN_ID=7 vepd run sim_judge k:=2 models:=ch_rw scenarios:=straight duration_s:=5 \\
      output_dir:=sj7                # on a domain you chose
  # robot_localization's Husky bag: its topics, wheel-odometry truth, the mountings of its IMU
  # and of its GPS antenna (the fixes' frame gps; the bag does not say where: base_link's origin)
  vepd run bag_replay bag:=../shared/data/robot_localization_tests/test1.bag rate:=4.0 \\
      gps_topic:=/fix imu_topic:=/imu/data truth_topic:=/husky_velocity_controller/odom \\
      truth_type:=nav_msgs/msg/Odometry \\
      static_tf:='base_link imu_link 0 -0.3 0.52 1.570796327 0 -1.570796327; base_link gps 0 0 0 0 0 0' \\
      output_dir:=/tmp/vepd_bag --json
"""  # noqa: E501 (an example as a user pastes it: a static_tf value cannot be broken)


def register(sub):
    graphs = ', '.join(sorted(GRAPH_ARGS))
    p = sub.add_parser(
        'run',
        add_help=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help='run a vepd_ros ROS graph (sim_judge, bag_replay, live_eval) without launch_ros',
        description=textwrap.fill(
            f'Run one of the graphs ({graphs}) in this process over DDS; arguments are the '
            "graph's launch arguments, as name:=value (`vepd run GRAPH --help` lists them with "
            'descriptions and defaults). The graph runs on a DDS domain nobody else uses unless '
            'ROS_DOMAIN_ID or --domain-id chooses one, and stops with an error when another '
            'publisher appears on its topics, when sim time and finished runs stall for '
            '--stall-timeout seconds, or when the result is incomplete (exit 1).',
            99,
        ),
        epilog=EXAMPLES
        + '\narguments of each graph (name:=default; GRAPH --help describes them):\n'
        + '\n'.join(
            textwrap.fill(
                ' '.join(f'{a.name}:={_show(a.default)}' for a in GRAPH_ARGS[g]),
                99,
                initial_indent=f'  {g}: ',
                subsequent_indent='      ',
            )
            for g in sorted(GRAPH_ARGS)
        ),
    )
    p.add_argument(
        '-h',
        '--help',
        action='store_true',
        help="show this help (after GRAPH: that graph's arguments) and exit",
    )
    p.add_argument('graph', nargs='?', choices=sorted(GRAPH_ARGS), metavar='GRAPH', help=graphs)
    p.add_argument('assignments', nargs='*', metavar='name:=value')
    p.add_argument('--json', action='store_true', help='print the evaluator result as JSON')
    p.add_argument(
        '--processes', action='store_true', help='one process per node instead of one process'
    )
    add_watch_options(p)
    p.add_argument(
        '--list', action='store_true', help='print the nodes and their --ros-args, then exit'
    )
    p.add_argument(
        '--overwrite', action='store_true',
        help='replace an output_dir that holds something else than an earlier run of this graph '
        '(a study, real runs): its Real/, Sim/, result.json and report/ are replaced, the rest '
        'kept; without it such a directory is refused')
    p.add_argument(
        '--quiet',
        action='store_true',
        help='no progress bar; only warnings and errors from the nodes (in-process)',
    )
    p.set_defaults(func=run, run_parser=p)


def add_watch_options(p) -> None:
    """
    Add the options of a graph run in this process to a parser.

    The options of a graph run in this process (``vepd run``, ``vepd demo``): its DDS domain,
    the stall limit and the overall limit.
    """
    p.add_argument(
        '--domain-id',
        type=int,
        default=None,
        metavar='N',
        help='DDS domain to run on (default: ROS_DOMAIN_ID if set, else a free domain leased '
        'on this machine)',
    )
    p.add_argument(
        '--stall-timeout',
        type=float,
        default=STALL_S,
        metavar='S',
        help='stop with an error when neither sim time nor the count of finished runs advances '
        f'for S wall seconds (default {STALL_S:g}; a slow machine only makes the run longer)',
    )
    p.add_argument(
        '--timeout',
        type=float,
        default=0.0,
        metavar='S',
        help='give up after S wall seconds in all (default 0: no limit, only the stall limit; '
        'live_eval runs until Ctrl-C)',
    )


def _show(v) -> str:
    return ('true' if v else 'false') if isinstance(v, bool) else (str(v) if v != '' else "''")


def graph_help(graph: str) -> str:
    """
    Return the arguments of ``graph`` as a help text.

    The arguments of ``graph`` (``GRAPH_ARGS``, the one place they are declared) as a help text.
    """
    lines = [f'arguments of {graph} (name:=default, then what it sets):']
    for a in GRAPH_ARGS[graph]:
        extra = f' (one of: {", ".join(map(str, a.choices))})' if a.choices is not None else ''
        lines.append(f'  {a.name}:={_show(a.default)}')
        lines.append(f'      {a.description}{extra}')
    return '\n'.join(lines)


def run(args) -> int:
    parser = getattr(args, 'run_parser', None)
    if getattr(args, 'help', False) or args.graph is None:
        if parser is not None:
            if args.graph is None:
                parser.print_help()
            else:
                print(
                    parser.format_usage().rstrip()
                    + '\n\n'
                    + graph_help(args.graph)
                    + '\n\n'
                    + EXAMPLES
                )
        return 0 if getattr(args, 'help', False) else 2
    raw = parse_assignments(args.assignments)
    values = typed_args(
        args.graph, {k: str(v) if not isinstance(v, str) else v for k, v in raw.items()}
    )
    nodes = build_graph(args.graph, values)
    if any(n.role == 'judge_supervisor' for n in nodes) and not args.list:
        raise ParameterError(
            'judge_per_run',
            True,
            'false under vepd run (robot_localization, or one judge chain per run, needs separate '
            'processes paced by truth_node: ros2 launch vepd_ros sim_judge.launch.py)',
        )
    if args.list:
        for n in nodes:
            print(f'{n.package}/{n.executable}  ' + ' '.join([*n.arguments, *n.ros_args()]))
        return 0
    out = values.get('output_dir')
    if not out or not any(n.role in ('recorder', 'evaluator') for n in nodes):
        return _run_graph(args, nodes, None)
    from vepd_ros.runs.safety import Discard, output_dir

    # the graph writes a new output beside OUT, swapped in whole when the result is complete
    # (exit 0); an earlier output (a study, real runs, a previous graph) stays as it was until then
    stopped = None
    with output_dir(out, command=f'run {args.graph}', overwrite=getattr(args, 'overwrite', False),
                    replaces=GRAPH_OUTPUT) as stage:
        try:
            code = _run_graph(args, build_graph(args.graph, {**values, 'output_dir': str(stage)}),
                              (stage, Path(out)))
        except KeyboardInterrupt as exc:
            # live_eval runs until Ctrl-C: what it evaluated so far is its output; any other
            # graph stopped early has no complete result and leaves OUT as it was
            if args.graph != 'live_eval' or not (stage / 'result.json').is_file():
                raise
            stopped, code = exc, 0
        if code != 0:
            raise Discard(code)
    if stopped is not None:
        from vepd_ros.runs.safety import ENDED

        ENDED.append(f'{out}: the live evaluation so far kept')
        raise stopped
    return code


def _moved(value, stage: str, final: str):
    """``value`` (the evaluator's result) with every path under ``stage`` put under ``final``."""
    if isinstance(value, dict):
        return {k: _moved(v, stage, final) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, stage, final) for v in value]
    if isinstance(value, str) and (value == stage or value.startswith(stage + os.sep)):
        return final + value[len(stage):]
    return value


GRAPH_OUTPUT = ('Real', 'Sim', 'result.json', 'report')
"""What a graph's recorders and evaluator write in output_dir (replaced by a new run)."""


def _run_graph(args, nodes, where) -> int:
    """Run the graph's nodes; ``where``: (staging dir they write into, the output it becomes)."""
    quiet = getattr(args, 'quiet', False)
    opts = {
        'stall_s': getattr(args, 'stall_timeout', STALL_S),
        'timeout': args.timeout or 0.0,
        'quiet': quiet,
        'progress_quiet': getattr(args, 'progress_quiet', quiet or args.json),
    }
    try:
        result = run_graph(args.graph, nodes, opts, getattr(args, 'domain_id', None),
                           args.processes)
    except RunError as exc:
        print(f'vepd run {args.graph}: error: {exc}', file=sys.stderr)
        return 1
    if result is None:
        print(
            f'vepd run {args.graph}: stopped before the evaluator published a result',
            file=sys.stderr,
        )
        return 1
    if where:  # the paths the user will find: the staging directory becomes OUT on exit 0
        result = _moved(result, str(where[0]), str(where[1]))
    if args.json:
        print(json.dumps(result, indent=1))
    elif 'models' not in result:
        for r in result.get('runs', []):
            shown = r['path']
            print(
                f'{shown}: speed RMSE E {r["E"]:.4f} m/s, spectral-flatness difference S '
                f'{r["S"]:.4f} '
                f'({r["se_len"]} estimate / {r["gt_len"]} truth samples)'
            )
        print(result.get('note', ''))
    else:
        from vepd_ros.commands._output import format_tables

        print(format_tables(result))
    out = where[1] if where else None
    if out:
        say(
            f'vepd run {args.graph}: runs'
            + (', result.json and report/' if 'models' in result else '')
            + f' in {out}/'
        )
    problems = result_problems(result)
    if problems:
        print(
            f'vepd run {args.graph}: error: not a complete result: ' + '; '.join(problems),
            file=sys.stderr,
        )
        return 1
    return 0

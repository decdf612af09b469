# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Evaluator node: compute VEPD over the recorded batches, publish and report it.

evaluator_node: computes VEPD when every batch holds K runs; publishes ``/vepd/result`` and writes
the report.

Listens to ``/vepd/runs`` (recorder events, JSON). Batches: the runs the recorders announce, plus
every batch stored under ``reference_dir`` (a directory in the batch layout: ``Real/`` and/or
``Sim/<label>/``). Once the reference side and every expected label hold ``k`` runs of every
scenario, it evaluates with ``vepd_ros.metrics.evaluator.EvaluatorCore`` and publishes the result
as JSON (the ``vepd evaluate --json`` shape, latched), and writes ``result.json`` + the report into
``output_dir``. With ``rolling`` (live use) it re-evaluates on each new run over the last ``k``
runs of each batch. If no publisher of ``/vepd/runs`` (no recorder) has appeared after
``topic_timeout_s``, it says so.

With ``exit_when_done`` (the end of a ``ros2 launch``) it prints the result as ``vepd run`` does
(Tables I and II, excluded runs, what they mean: ``report.text.format_tables``) and where it was
written, then exits 0; stopped before it has a result (the launch shut down for another reason),
it says which batches were short (the launch then exits 1: ``launch_support``). Runs that cannot
be scored make it exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path

from rclpy.node import Node
from std_msgs.msg import String
from vepd_ros.fileio import atomic_write_text
from vepd_ros.metrics.evaluator import EvaluatorCore, REFERENCE
from vepd_ros.metrics.vepd import MAX_N_BOOT
from vepd_ros.naming import canonical_scenario
from vepd_ros.nodes.health import DropCounter, TopicWatchdog
from vepd_ros.nodes.lifecycle import run_node
from vepd_ros.nodes.params import declare_params
from vepd_ros.nodes.qos import EVENT_QOS
from vepd_ros.params import Param, ParameterError
from vepd_ros.report.text import format_tables
from vepd_ros.runs.format import read_run
from vepd_ros.runs.layout import display_name, scan_batch_dir
from vepd_ros.runs.safety import claim_graph_output, mark_graph_output
from vepd_ros.streams import TOPIC_RESULT, TOPIC_RUNS

EVALUATOR_PARAMS = [
    Param('k', 10, 'runs per scenario and batch that complete it', low=2),
    Param('output_dir', 'vepd_out', 'where result.json and the report are written'),
    Param(
        'reference_dir', '', 'stored batches (batch layout root) to evaluate with the live ones'
    ),
    Param(
        'expected_labels', '', 'labels under test to wait for (comma list; empty: any that appear)'
    ),
    Param('scenarios', '', 'scenarios to wait for (comma list; empty: those of the reference)'),
    Param('velocity', 'speed', 'scalar velocity compared', choices=('speed', 'vx', 'vector')),
    Param('rolling', False, 're-evaluate on every new run over the last k runs of each batch'),
    Param('n_boot', 1000, 'bootstrap resamples for the 95 % interval', low=0, high=MAX_N_BOOT),
    Param('seed', 0, 'bootstrap seed', low=0),
    Param('report', True, 'write report.md/.html and figures when all batches live in output_dir'),
    Param(
        'warnings',
        [''],
        "what the graph knows the result must say (e.g. a configured sensor's rate not applied): "
        'added to the warnings of the result',
    ),
    Param(
        'exit_when_done',
        False,
        'exit (status 0) once the result is published (not with rolling): '
        'under ros2 launch this ends the launch',
    ),
    Param(
        'topic_timeout_s',
        10.0,
        f'report a {TOPIC_RUNS} without any publisher after this long (s, wall clock)',
        low=0.0,
        low_open=True,
    ),
]


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.split(',') if x.strip()]


class EvaluatorNode(Node):

    def __init__(self, **kwargs):
        super().__init__('evaluator', **kwargs)
        self.p = p = declare_params(self, EVALUATOR_PARAMS)
        claim_graph_output(p['output_dir'])  # before anything is written (exit 2 when refused)
        self.drops = DropCounter(self)
        self.batches: dict[str, dict[str, dict[int, Path]]] = {}  # side → scenario → j → csv
        self.stored_sides: set[str] = set()
        if p['reference_dir']:
            self._load_stored(Path(p['reference_dir']))
        self.expected = _csv(p['expected_labels'])
        self.scenarios = [canonical_scenario(s) for s in _csv(p['scenarios'])]
        self.pub = self.create_publisher(String, TOPIC_RESULT, EVENT_QOS)
        self.create_subscription(String, TOPIC_RUNS, self._on_run, EVENT_QOS)
        self.evaluations = 0
        self.runs_received = 0
        self.watchdog = TopicWatchdog(self, p['topic_timeout_s'])
        self.watchdog.watch(
            TOPIC_RUNS,
            lambda: self.runs_received > 0 or self.count_publishers(TOPIC_RUNS) > 0,
            what='publisher',
        )
        self._evaluated_key = None
        self._exit_timer = None
        if p['exit_when_done'] and p['rolling']:
            raise ParameterError(
                'exit_when_done', True, 'false with rolling (a rolling window has no last run)'
            )
        self.get_logger().info(
            f'evaluator: k={p["k"]} labels={self.expected or "any"} '
            f'scenarios={self.scenarios or "of the reference"} → {p["output_dir"]}'
        )

    def _load_stored(self, root: Path):
        for side, folder in [(REFERENCE, root / 'Real')] + [
            (d.name.removesuffix('_results'), d)
            for d in sorted((root / 'Sim').glob('*'))
            if d.is_dir()
        ]:
            if not folder.is_dir():
                continue
            b, warns = scan_batch_dir(folder, side, display_name(side))
            for w in warns:
                self.get_logger().warning(w)
            for sc, lst in b.runs.items():
                self.batches.setdefault(side, {}).setdefault(sc, {}).update(dict(lst))
            self.stored_sides.add(side)
        if not self.stored_sides:
            self.get_logger().error(f'reference_dir {root}: no Real/ or Sim/<label>/ batch found')

    def _on_run(self, msg: String):
        self.runs_received += 1
        try:
            ev = json.loads(msg.data)
        except ValueError as exc:
            return self.drops.drop('bad_event', f'{TOPIC_RUNS}: {exc}')
        if ev.get('status') != 'written':
            if ev.get('status') == 'discarded':
                self.get_logger().warning(
                    f'run discarded by {ev.get("label")}: {ev.get("reason")}'
                )
            return
        try:
            side = REFERENCE if ev['side'] == 'real' else ev['label']
            self.batches.setdefault(side, {}).setdefault(ev['scenario'], {})[int(ev['j'])] = Path(
                ev['path']
            )
        except (KeyError, TypeError, ValueError) as exc:
            return self.drops.drop('bad_event', f'{TOPIC_RUNS}: missing {exc}')
        self.maybe_evaluate()

    # -- readiness and evaluation
    # -----------------------------------------------------------------------
    def _selected(self) -> dict[str, dict[str, list[Path]]] | None:
        """
        Return the runs to evaluate, or None while a batch is short.

        The runs to evaluate (last k of each batch when rolling), or None while a batch is short.
        """
        k = self.p['k']
        ref = self.batches.get(REFERENCE, {})
        scenarios = self.scenarios or sorted({canonical_scenario(s) for s in ref})
        labels = self.expected or [s for s in self.batches if s != REFERENCE]
        if not scenarios or not labels:
            return None
        out: dict[str, dict[str, list[Path]]] = {}
        for side in [REFERENCE] + labels:
            by_sc = {
                canonical_scenario(s): (s, runs) for s, runs in self.batches.get(side, {}).items()
            }
            for sc in scenarios:
                if sc not in by_sc or len(by_sc[sc][1]) < k:
                    return None
                name, runs = by_sc[sc]
                js = sorted(runs)
                js = js[-k:] if self.p['rolling'] else js
                out.setdefault(side, {})[name] = [runs[j] for j in js]
        return out

    def maybe_evaluate(self) -> dict | None:
        sel = self._selected()
        if sel is None:
            return None
        key = json.dumps(
            {s: {sc: [str(p) for p in ps] for sc, ps in v.items()} for s, v in sel.items()},
            sort_keys=True,
        )
        if key == self._evaluated_key or (
            self._evaluated_key is not None and not self.p['rolling']
        ):
            return None
        self._evaluated_key = key
        core = EvaluatorCore(
            k=self.p['k'],
            velocity=self.p['velocity'],
            n_boot=self.p['n_boot'],
            seed=self.p['seed'],
        )
        core.warnings.extend(w for w in self.p['warnings'] if w)
        out = Path(self.p['output_dir'])
        out.mkdir(parents=True, exist_ok=True)
        try:
            for side, by_sc in sel.items():
                if side != REFERENCE:
                    core.add_model(side, display_name(side))
                for sc, paths in by_sc.items():
                    core.add_records(side, sc, [read_run(p) for p in paths])
            res = core.result()
        except ValueError as exc:
            # No score can be computed from these runs (e.g. runs excluded for lost data left a
            # batch below two runs): say so on /vepd/result and in result.json, never a silent or
            # partial VEPD.
            return self._publish_failure(out, str(exc), core)
        self.evaluations += 1
        atomic_write_text(out / 'result.json', json.dumps(res, indent=1, allow_nan=False) + '\n')
        self.pub.publish(String(data=json.dumps(res)))
        line = ', '.join(f'{m["display_name"]} {m["VEPD"]:.4f}' for m in res['models'].values())
        if self.p['rolling']:
            self.get_logger().info(
                f'VEPD over the last {self.p["k"]} runs of each batch '
                f'(evaluation {self.evaluations}): {line}'
            )
        else:
            self.get_logger().info(f'VEPD: {line} → {out / "result.json"}')
        for ex in res.get('excluded_runs') or []:
            self.get_logger().warning(
                f'run excluded: {ex.get("path")} ({ex.get("label")}, {ex.get("scenario")}): '
                f'{ex.get("reason")}'
            )
        for b in res.get('incomplete_batches') or []:
            self.get_logger().warning(
                f'batch incomplete: {b.get("label")} {b.get("scenario")} has {b.get("have")} '
                f'of {b.get("k")} usable runs'
            )
        if self.p['report'] and not self.stored_sides:
            try:
                from vepd_ros.report import build_report

                build_report(
                    out,
                    velocity=self.p['velocity'],
                    n_boot=self.p['n_boot'],
                    seed=self.p['seed'],
                    k=self.p['k'],
                    progress=False,
                )
            # the result stands; the report is a by-product
            except Exception as exc:  # noqa: BLE001
                self.get_logger().warning(f'report not written: {exc}')
        if not self.p['rolling'] and res.get('complete'):
            mark_graph_output(out, 'complete')  # a later launch into it is refused
        if self.p['exit_when_done'] and self._exit_timer is None:
            self._print_result(res, out)
            # a moment for DDS to deliver the latched result to subscribers that are already
            # matched
            import rclpy
            from rclpy.clock import Clock, ClockType

            self.get_logger().info('result published; exiting (exit_when_done)')
            self._exit_timer = self.create_timer(
                0.5,
                lambda: rclpy.try_shutdown(context=self.context),
                clock=Clock(clock_type=ClockType.STEADY_TIME),
            )
        return res

    def _print_result(self, res: dict, out: Path) -> None:
        """
        Print the result as ``vepd run`` does, and where it went: the end of a launch.

        On stdout (launch shows it under the node's name): Tables I and II with the excluded
        runs and what they mean (``format_tables``, the one text form), each warning, then the
        paths of result.json and the report.
        """
        text = [format_tables(res), *(f'warning: {w}' for w in res.get('warnings') or [])]
        report = out / 'report' / 'report.html'
        text.append(
            f'VEPD result: {out.resolve() / "result.json"}'
            + (f'; report: {report.resolve()}' if report.is_file() else '')
            + (f'; runs: {out.resolve()}/' if not self.stored_sides else '')
        )
        print('\n'.join(text), flush=True)

    def missing_batches(self) -> list[str]:
        """
        Say which batches hold fewer than ``k`` runs (what a result still waits for).

        ``<side> <scenario>: n of k runs`` for each batch short of ``k``; the labels and scenarios
        waited for as in ``_selected``.
        """
        k = self.p['k']
        scenarios = self.scenarios or sorted(
            {canonical_scenario(s) for s in self.batches.get(REFERENCE, {})}
        )
        labels = self.expected or [s for s in self.batches if s != REFERENCE]
        short = []
        for side in [REFERENCE] + labels:
            by_sc = {canonical_scenario(s): len(r) for s, r in self.batches.get(side, {}).items()}
            for sc in scenarios or ['(any scenario)']:
                if by_sc.get(sc, 0) < k:
                    short.append(f'{side} {sc}: {by_sc.get(sc, 0)} of {k} runs')
        if not labels:
            short.append('no simulated batch announced')
        return short

    def destroy_node(self):
        if self.p['exit_when_done'] and self._exit_timer is None:
            # stopped before a result: say what was missing (the launch names why it stopped)
            self.get_logger().error(
                f'stopped before a result ({self.runs_received} run events received); '
                f'short: {"; ".join(self.missing_batches()) or "none"}'
            )
        return super().destroy_node()

    def _publish_failure(self, out: Path, why: str, core: EvaluatorCore) -> dict:
        res = {
            'complete': False,
            'error': why,
            'models': {},
            'excluded_runs': list(core.excluded),
            'incomplete_batches': core.incomplete_batches(),
            'min_coverage': core.min_coverage,
        }
        atomic_write_text(out / 'result.json', json.dumps(res, indent=1, allow_nan=False) + '\n')
        self.pub.publish(String(data=json.dumps(res)))
        self.get_logger().error(f'no result: {why}')
        for ex in res['excluded_runs']:
            self.get_logger().error(
                f'run excluded: {ex.get("path")} ({ex.get("label")}, {ex.get("scenario")}): '
                f'{ex.get("reason")}'
            )
        if self.p['exit_when_done'] and self._exit_timer is None and not self.p['rolling']:
            import rclpy
            from rclpy.clock import Clock, ClockType

            self.exit_status = 1  # the launch ends with the failure, not with a result
            self._exit_timer = self.create_timer(
                0.5,
                lambda: rclpy.try_shutdown(context=self.context),
                clock=Clock(clock_type=ClockType.STEADY_TIME),
            )
        return res


def main(args=None) -> int:
    return run_node(EvaluatorNode, args=args, params=EVALUATOR_PARAMS)


if __name__ == '__main__':
    raise SystemExit(main())

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run the offline study as plain function calls.

The offline study: truth → sensor models → judge → runs → VEPD as plain function calls (design.md
§1, way 3).

    run_study(models=['ch_gauss', 'ch_rw', ...], scenarios=['straight', 'circle', 'sine'], runs=10,
              duration_s=30, reference='rtk' | '/path/to/data', judge='builtin', seed=0,
              out_dir='study')

Steps, each its own function so fronts and tests can use them separately:

* ``simulate_run``    truth (``vepd_ros.truth.generate``) and both sensor models
  (``vepd_ros.models.sensors.simulate_sensors``) for run j of one model × scenario; seeds come
  from ``vepd_ros.seeding.derive_seed`` by name, exactly as the ROS graph derives them (truth seed
  per scenario and run — the same truth for every model —, GPS/IMU seeds per label, scenario and
  run);
* ``judge_batch``     the judge step (``pipelines.judge_step.judge``) on sensor runs: the
  estimator's body-frame velocity out ``[(stamp_s, vx, vy), ...]``; judges by name
  (``judge.registry``: 'builtin', the default, or 'bicycle') with robot_localization's own YAML
  (``config/ekf.yaml``, ``config/navsat.yaml``), runs batched by identical message timing;
* ``run_records``     estimate + truth (body-frame vx, vy at ``truth_rate_hz``) → ``RunRecord``s;
* ``run_study``       every run simulated, judged and written (``OUT/Real``, ``OUT/Sim/<label>``,
  names and sidecar fields from ``BatchWriter.run_file``) by worker processes, chunk by chunk
  (``simulate_and_judge``); the main process lists each chunk in the batch indexes and evaluates
  with ``EvaluatorCore``; result.json in OUT. ``vepd evaluate OUT`` re-computes it from the files.

Output directory (``safety.output_dir``, command ``study``): OUT must be new, empty, or a
previous ``vepd study`` output (its marker ``.vepd-output.json``); a re-run into a previous output
REPLACES it whole — the new study is built beside OUT and swapped in when complete (its ``Sim/``,
``result.json``, the tables and, unless the reference is read from inside OUT, ``Real/`` are the
new ones; no resume), so a refused, failed or interrupted study leaves OUT as it was. Anything
else is refused unless ``overwrite``. ``finish(stage, res)``, if given, writes more files into the
new output before it is swapped in (``vepd study``'s tables). The marker records the plan (runs,
models, scenarios) so ``vepd evaluate OUT`` flags an interrupted study's short batches. Worker
processes die with the study (``PR_SET_PDEATHSIG`` on Linux, and a check that the parent is alive
before each write).

The reference ("real" side) is either a directory of real runs (``<REF>/Real/`` or a folder of
``<scenario>_<j>.csv``; copied into ``OUT/Real`` so OUT is self-contained) or a GPS model name
simulated as the real side (e.g. ``rtk``, the stand-in for an RTK receiver), with the same IMU
model.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import shutil
from typing import Mapping, Sequence

import numpy as np
from vepd_ros.fileio import atomic_write_text
from vepd_ros.judge.registry import get_judge
from vepd_ros.metrics.evaluator import EvaluatorCore, NON_FINITE_SENSORS, REFERENCE
from vepd_ros.metrics.records import RunRecord
from vepd_ros.models import DEFAULT_IMU_MODEL
from vepd_ros.models.spec import SIDE_RATE_HZ, unused_rate_warning
from vepd_ros.params_file import config_file
from vepd_ros.pipelines.judge_step import judge as judge_step, stack_runs
from vepd_ros.runs.format import read_run, sidecar_path, write_runs
from vepd_ros.runs.layout import BatchWriter, display_name, scan_batch_dir
from vepd_ros.seeding import derive_seed
from vepd_ros.streams import fix_fields, imu_fields, ns_from_s, Stream


@dataclass
class SimulatedRun:
    scenario: str
    j: int
    label: str
    seeds: dict
    sensors: object  # vepd_ros.models.sensors.SensorRun


GPS_RATE_HZ = SIDE_RATE_HZ['gps']
IMU_RATE_HZ = SIDE_RATE_HZ['imu']


def truth_samples(
    scenario: str,
    j: int,
    duration_s: float,
    seed: int,
    gps_rate_hz: float = GPS_RATE_HZ,
    imu_rate_hz: float = IMU_RATE_HZ,
    truth_rate_hz: float = 25.0,
):
    """
    Return the truth of run j of a scenario on the sensor clocks.

    The truth of run j of a scenario (seeded by scenario and run: the same for every model) on the
    sensor clocks (``models.sensors.truth_at_sensors``) — shared by the models run over it.
    """
    from vepd_ros.models.sensors import truth_at_sensors
    from vepd_ros.truth import canonical_scenario, generate

    sc = canonical_scenario(scenario)
    traj = generate(sc, duration_s, derive_seed(seed, 'truth', sc, j))
    return truth_at_sensors(traj, gps_rate_hz, imu_rate_hz, truth_rate_hz)


def simulate_run(
    label: str,
    gps_model,
    imu_model,
    scenario: str,
    *,
    j: int,
    duration_s: float,
    seed: int,
    gps_params: dict | None = None,
    imu_params: dict | None = None,
    gps_rate_hz: float = GPS_RATE_HZ,
    imu_rate_hz: float = IMU_RATE_HZ,
    truth_rate_hz: float = 25.0,
    truth=None,
) -> SimulatedRun:
    """
    Truth and sensor data of run j (1-based) of one label × scenario, seeded by name (``seeding``).

    ``gps_model``/``imu_model``: a ``SensorSpec`` (``models.spec``) or a model name (its
    parameters then ``gps_params``/``imu_params``, checked by ``sensor_spec``). ``truth``:
    ``truth_samples`` of this scenario and run, when already computed for another model.
    """
    from vepd_ros.models.sensors import simulate_sensors
    from vepd_ros.truth import canonical_scenario

    gps = as_spec('gps', gps_model, gps_params)
    imu = as_spec('imu', imu_model, imu_params)
    sc = canonical_scenario(scenario)
    seeds = {
        'truth': derive_seed(seed, 'truth', sc, j),
        'gps': derive_seed(seed, 'gps', label, sc, j),
        'imu': derive_seed(seed, 'imu', label, sc, j),
    }
    if truth is None:
        truth = truth_samples(sc, j, duration_s, seed, gps_rate_hz, imu_rate_hz, truth_rate_hz)
    s = simulate_sensors(
        None,
        gps.make_model(seeds['gps']),
        imu.make_model(seeds['imu']),
        gps_rate_hz=gps_rate_hz,
        imu_rate_hz=imu_rate_hz,
        truth_rate_hz=truth_rate_hz,
        shared=truth,
    )
    return SimulatedRun(scenario, j, label, seeds, s)


def as_spec(kind: str, model, params: dict | None = None):
    """Return ``model`` as a ``SensorSpec``: one already, or a name with ``params`` (checked)."""
    from vepd_ros.models.spec import sensor_spec, SensorSpec

    if isinstance(model, SensorSpec):
        if params:
            raise ValueError(f'{kind}: parameters given beside a SensorSpec; set them in it')
        return model
    return sensor_spec(kind, params, model=model)


def judge_inputs(sensor_runs: Sequence) -> list[tuple[list[int], Stream, Stream]]:
    """
    Build the judge's input streams: runs grouped by identical message timing.

    Runs grouped by identical message timing (IMU stamps, GPS stamps and arrivals), each group as
    an IMU and a GPS ``Stream``; unpublished GPS samples become NaN positions (navsat ignores
    them).
    """
    groups: dict[bytes, list[int]] = {}
    for i, r in enumerate(sensor_runs):
        key = (
            ns_from_s(r.imu.t_s).tobytes()
            + b'|'
            + ns_from_s(r.gps.stamp_s).tobytes()
            + b'|'
            + ns_from_s(r.gps.publish_s).tobytes()
        )
        groups.setdefault(key, []).append(i)
    out = []
    for idx in groups.values():
        rs = [sensor_runs[i] for i in idx]
        r0 = rs[0]
        imu = Stream(
            'imu',
            ns_from_s(r0.imu.t_s),
            frame_id='base_link',
            fields=stack_runs([imu_fields(r.imu) for r in rs]),
        )
        gps = Stream(
            'fix',
            ns_from_s(r0.gps.stamp_s),
            ns_from_s(r0.gps.publish_s),
            frame_id='base_link',  # the simulated antenna is at the truth: base_link's origin
            fields=stack_runs([fix_fields(r.gps, r.gps_lla) for r in rs]),
        )
        out.append((idx, imu, gps))
    return out


def judge_batch(
    sensor_runs: Sequence, judge: str = 'builtin', ekf_yaml=None, navsat_yaml=None
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """
    Run the judge on each sensor run; return the estimator's outputs.

    The judge step (``pipelines.judge_step.judge``) on each group of ``judge_inputs``: for each
    sensor run, the estimator's output (stamps in s, body vx, body vy).
    """
    get_judge(judge)  # a bad name is an error even with no runs
    out: list = [None] * len(sensor_runs)
    for idx, imu, gps in judge_inputs(sensor_runs):
        res = judge_step(imu, gps, judge=judge, ekf_yaml=ekf_yaml, navsat_yaml=navsat_yaml)
        for row, i in enumerate(idx):
            st, vx, vy = res.velocity(row)
            out[i] = (st / 1e9, np.asarray(vx, float), np.asarray(vy, float))
    return out


def run_records(
    sim_runs: Sequence[SimulatedRun], estimates, meta: dict | None = None
) -> list[RunRecord]:
    """
    Pair each run's estimate and truth as RunRecords.

    Estimate and truth (body-frame vx, vy) of each run, times from the run start, as RunRecords.
    """
    recs = []
    for r, (t, vx, vy) in zip(sim_runs, estimates):
        s = r.sensors
        t0 = float(s.truth_t_s[0])
        vb = np.asarray(s.truth.velocity_body, float)
        m = dict(meta or {})
        bad = _non_finite_sensor_values(s)
        if bad:  # the evaluator excludes the run, naming why (metrics.evaluator)
            m[NON_FINITE_SENSORS] = bad
        m.update(
            {
                'seeds': r.seeds,
                'scenario': r.scenario,
                'j': r.j,
                'message_counts': {
                    'imu': int(len(s.imu)),
                    'gps': int(np.sum(s.gps.published)),
                    'estimate': int(len(t)),
                    'truth': int(len(s.truth_t_s)),
                },
            }
        )
        recs.append(
            RunRecord.from_components(
                np.asarray(t) - t0, vx, vy, np.asarray(s.truth_t_s) - t0, vb[:, 0], vb[:, 1], m
            )
        )
    return recs


def _non_finite_sensor_values(s) -> dict:
    """Return {sensor: count} of the non-finite values a simulated run published (none: {})."""
    keep = s.gps.published
    counts = {
        'gps': int(np.count_nonzero(~np.isfinite(s.gps_lla[keep])))
        + int(np.count_nonzero(~np.isfinite(s.gps.covariance_enu[keep]))),
        'imu': int(np.count_nonzero(~np.isfinite(s.imu.angular_velocity)))
        + int(np.count_nonzero(~np.isfinite(s.imu.linear_acceleration))),
    }
    return {k: v for k, v in counts.items() if v}


def reference_dir(ref) -> Path | None:
    """Return the directory of real runs ``ref`` names (its ``Real/`` if any), or None."""
    p = Path(ref)
    if not p.is_dir():
        return None
    return p / 'Real' if (p / 'Real').is_dir() else p


CHUNK_RUNS = 90
"""Runs judged together in one vectorised pass (at most; chunks are made equal and, with several
workers, a whole number of rounds). The judge's cost per step is mostly fixed numpy call overhead
(the column-form transition alone is ~180 element-wise calls whatever the batch size), so larger
batches amortise it. The paper-sized study (180 runs, 2 workers on the 2-core box), CPU seconds
(``benchmarks/bench_study.py --chunk``; /usr/bin/time -v): CHUNK_RUNS 45 (4 chunks) 8.3–9.1 s,
peak RSS 0.54 GB per process; 90 (2 chunks) 7.0–7.7 s, 0.90 GB; 180 gives the same 2 chunks as 90
(whole rounds). Every run of a study shares its message timing whatever its label or scenario, so
chunks mix labels and scenarios freely; the chunking changes no bit of any run."""


@dataclass(frozen=True)
class ChunkPlan:
    """What every chunk of a study shares: the models, the judge and how runs are written."""

    imu: object  # SensorSpec of every side's IMU
    duration_s: float
    seed: int
    judge: str
    ekf_yaml: str
    navsat_yaml: str
    fsync: bool


def _simulate_and_judge(args) -> list[RunRecord]:
    """
    One chunk (run in a worker process): (ChunkPlan, specs, outputs) → RunRecords.

    ``specs`` is [(label, GPS SensorSpec, scenario, j), ...].
    Consecutive runs of the same scenario and j share one truth (``truth_samples``, computed once).
    With ``outputs`` [(csv_path, sidecar fields), ...] the runs are written there too
    (``write_runs``: each file atomic, its data fsynced before the rename, each directory synced
    once per chunk).
    """
    plan, specs, outputs = args
    from vepd_ros.truth import canonical_scenario

    sims, key, truth = [], None, None
    for label, gps, sc, j in specs:
        if (canonical_scenario(sc), j) != key:
            key = (canonical_scenario(sc), j)
            truth = truth_samples(sc, j, plan.duration_s, plan.seed)
        sims.append(
            simulate_run(label, gps, plan.imu, sc, j=j, duration_s=plan.duration_s,
                         seed=plan.seed, truth=truth)
        )
    est = judge_batch([r.sensors for r in sims], plan.judge, plan.ekf_yaml, plan.navsat_yaml)
    recs = []
    for (label, gps, _, _), r, e in zip(specs, sims, est):
        meta = {
            'side': 'real' if label == REFERENCE else 'sim',
            'label': label,
            'model': gps.model,
            'imu_model': plan.imu.model,
            'judge': plan.judge,
            'study_seed': plan.seed,
            'duration_s': plan.duration_s,
            'source': 'vepd study (offline)',
        }
        recs += run_records([r], [e], meta)
    if outputs is not None:
        _exit_if_orphaned()  # never write for a study that is gone
        write_runs([(path, rec, m) for (path, m), rec in zip(outputs, recs)], plan.fsync)
    return recs


_PARENT_PID: int | None = None
"""In a worker process: the pid of the study that started it (``_worker_init``)."""


def _worker_init(parent_pid: int) -> None:
    """
    Pool initializer: the worker dies with its parent.

    On Linux the kernel sends SIGKILL when the parent exits (``prctl(PR_SET_PDEATHSIG)``); a parent
    already gone by then is caught by the ppid check, and ``_exit_if_orphaned`` repeats it before
    every write (other systems).
    """
    global _PARENT_PID
    _PARENT_PID = parent_pid
    try:
        import ctypes
        import signal

        # Ctrl-C reaches the whole process group: the study (the parent) ends cleanly and
        # terminates the pool (SIGTERM, whose default kills quietly); no worker traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    _exit_if_orphaned()


def _exit_if_orphaned() -> None:
    if _PARENT_PID is not None and os.getppid() != _PARENT_PID:
        os._exit(1)


def truth_order(specs: Sequence[tuple[str, str, str, int]]) -> list[int]:
    """
    Return the positions of ``specs`` with the runs of one truth together.

    Positions of ``specs`` with the runs of one truth (scenario, j) next to each other: scenarios
    in order of first appearance, then j, labels in their given order (a stable sort). Per label
    the order is kept whenever ``specs`` lists each label's runs by scenario, then j (as
    ``run_study`` does).
    """
    first: dict[str, int] = {}
    for _, _, sc, _ in specs:
        first.setdefault(sc, len(first))
    return sorted(range(len(specs)), key=lambda i: (first[specs[i][2]], specs[i][3]))


def simulate_and_judge(
    specs: Sequence[tuple],
    imu_model,
    duration_s: float,
    seed: int,
    *,
    judge: str = 'builtin',
    ekf_yaml=None,
    navsat_yaml=None,
    workers: int | None = None,
    progress: bool = False,
    outputs=None,
    fsync: bool = True,
):
    """
    Simulate and judge every run of ``specs`` in chunks over worker processes.

    Every run of ``specs`` (label, GPS ``SensorSpec`` or model name, scenario, j) simulated and
    judged with the IMU ``imu_model`` (a ``SensorSpec`` or a name), in chunks of
    ``CHUNK_RUNS`` over ``workers`` processes (default: all cores). Runs are taken in
    ``truth_order`` (the six labels of one scenario and j together: one truth each) and yielded as
    lists of RunRecords in chunk order. ``outputs`` (one (csv_path, sidecar fields) per spec, e.g.
    ``BatchWriter.run_file``): the workers also write each run there, so writing overlaps the other
    chunks' computing. The numbers do not depend on the order, the chunking or the number of
    workers (each run's filter is independent).
    """
    ekf_yaml = str(ekf_yaml or config_file('ekf.yaml'))
    navsat_yaml = str(navsat_yaml or config_file('navsat.yaml'))
    order = truth_order(specs)
    specs = [(label, as_spec('gps', g), sc, j) for label, g, sc, j in (specs[i] for i in order)]
    outputs = None if outputs is None else [outputs[i] for i in order]
    workers = max(1, workers or os.cpu_count() or 1)
    n_chunks = max(1, -(-len(specs) // CHUNK_RUNS))
    if workers > 1:  # whole rounds: every worker gets as many chunks
        n_chunks = min(len(specs), -(-n_chunks // workers) * workers) or 1
    size = -(-len(specs) // n_chunks)
    plan = ChunkPlan(as_spec('imu', imu_model), duration_s, seed, judge, ekf_yaml, navsat_yaml,
                     fsync)
    chunks = [
        (plan, specs[i: i + size], None if outputs is None else outputs[i: i + size])
        for i in range(0, len(specs), size)
    ]
    workers = min(workers, len(chunks))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(specs), desc='study', unit='run')
    # scipy.signal (the truth model's and the IMU model's lfilter) is imported here once and
    # inherited by the forked workers, instead of once per worker (~0.5 s each).
    import vepd_ros.models.imu  # noqa: F401
    import vepd_ros.truth  # noqa: F401

    try:
        if workers <= 1:
            results = map(_simulate_and_judge, chunks)
            for recs in results:
                bar and bar.update(len(recs))
                yield recs
        else:
            import multiprocessing as mp

            with mp.get_context('fork').Pool(workers, _worker_init, (os.getpid(),)) as pool:
                for recs in pool.imap(_simulate_and_judge, chunks):
                    bar and bar.update(len(recs))
                    yield recs
    finally:
        if bar is not None:
            bar.close()


RUN_BYTES_PER_S = 50_000
"""A lower bound of what one run in a worker's chunk holds per simulated second (truth on its
1 kHz grid shared by the labels, sensor streams, judge state): measured ~0.16 MB/s per run (2 runs
of 500 s in one chunk: 322 MB above the interpreter's own)."""
RECORD_BYTES_PER_S = 1_500
"""What one finished run (estimate and truth speed and components) holds per second."""


def memory_plan(n_runs: int, duration_s: float, workers: int | None) -> float:
    """Bytes a study of ``n_runs`` runs of ``duration_s`` holds at its peak (a lower bound)."""
    workers = max(1, workers or os.cpu_count() or 1)
    chunk = min(CHUNK_RUNS, n_runs)
    busy = min(workers, -(-n_runs // chunk))
    return (busy * chunk * RUN_BYTES_PER_S + n_runs * RECORD_BYTES_PER_S) * duration_s


MAX_RUNS = 1000
"""Most runs per model and scenario a study makes (the paper: 10). Every run's record stays in
memory until the evaluation, so K is bounded rather than left to fail with a MemoryError."""

MIN_DURATION_S = 1.0
"""Shortest run a study makes: 10 GPS fixes at 10 Hz and 15 samples of the evaluator's 15 Hz
grid. Shorter runs leave the judge fewer estimates than a run's E and S need."""


def _check_models(gps_specs, imu) -> None:
    """
    Build every model of a study once, in the parent.

    Every model (its spec checked already) of a study built once here, in the parent: a bad
    name or parameter is a ParameterError before OUT is touched or a worker starts, not one
    raised in every worker.
    """
    imu.make_model(0)
    for g in gps_specs:
        g.make_model(0)


def run_study(
    models: Sequence[str],
    scenarios: Sequence[str],
    runs: int,
    *,
    duration_s: float,
    reference: str,
    out_dir,
    judge: str = 'builtin',
    seed: int = 0,
    imu_model=DEFAULT_IMU_MODEL,
    velocity: str = 'speed',
    n_boot: int = 1000,
    ekf_yaml=None,
    navsat_yaml=None,
    progress: bool = False,
    fsync: bool = True,
    workers: int | None = None,
    overwrite: bool = False,
    include_runs: bool = False,
    configured: Mapping | None = None,
    finish=None,
) -> dict:
    """
    Run the whole study; return the evaluation result (also written to OUT/result.json).

    OUT: see the module doc (refused when it holds anything but a previous study, unless
    ``overwrite``). ``include_runs``: the result returned also carries every run's E and S
    (``runs``, ``display_names``, as ``evaluate_root(include_runs=True)``); result.json never does.
    ``imu_model``: the IMU of every side, a ``SensorSpec`` or a model name. ``configured``: more
    models under test, label → GPS ``SensorSpec``, e.g. read from a simulator's own configuration
    (``io.simconfig.load_sensor_file``); Sim/<label>/ has their runs.
    """
    from vepd_ros.models.gps import GPS_MODELS
    from vepd_ros.runs.safety import check_memory_plan, output_dir
    from vepd_ros.truth import canonical_scenario

    if not 2 <= runs <= MAX_RUNS:
        raise ValueError(
            f'runs must be >= 2 (a distance between distributions) and <= {MAX_RUNS} '
            f'per model and scenario, got {runs}'
        )
    if not duration_s >= MIN_DURATION_S:  # also NaN
        raise ValueError(
            f'duration must be at least {MIN_DURATION_S:g} s per run, got {duration_s!r}'
        )
    get_judge(judge)  # a bad name: the clear error before OUT is touched
    scen = [canonical_scenario(s) for s in scenarios]
    for m in models:
        if m not in GPS_MODELS:
            raise ValueError(f'unknown GPS model {m!r}: expected one of {", ".join(GPS_MODELS)}')
    imu = as_spec('imu', imu_model)
    gps_of = {m: as_spec('gps', m) for m in models}
    if reference in GPS_MODELS:
        gps_of[REFERENCE] = as_spec('gps', reference)
    configured = dict(configured or {})
    for label, gps in configured.items():
        if label in models or label == REFERENCE:
            raise ValueError(f'model label {label!r} given twice')
        gps_of[label] = as_spec('gps', gps)
    _check_models(gps_of.values(), imu)
    out = Path(out_dir)
    core = EvaluatorCore(k=runs, velocity=velocity, n_boot=n_boot, seed=seed)
    # a configured sensor's own rate (an SDF <update_rate>, a params file's rate_hz) is not the
    # study's: said where the result appears, never applied silently
    for label, kind, spec in [*((k, 'gps', gps_of[k]) for k in configured),
                              ('the IMU', 'imu', imu)]:
        warning = unused_rate_warning(label, kind, spec.rate_hz)
        if warning:
            core.warnings.append(warning)
    ref_dir = reference_dir(reference)
    sides = len(models) + len(configured) + (ref_dir is None)
    check_memory_plan(memory_plan(sides * len(scen) * runs, duration_s, workers),
                      f'--runs {runs} x --duration {duration_s:g} x {sides} models (with the '
                      f'reference) x {len(scen)} scenarios')
    jobs = []
    if ref_dir is None:
        if reference not in GPS_MODELS:
            raise ValueError(
                f'--reference {reference!r}: neither a directory of real runs nor a GPS model '
                f'({", ".join(GPS_MODELS)})'
            )
        jobs += [(REFERENCE, gps_of[REFERENCE], s) for s in scen]
    ref_inside = ref_dir is not None and out.resolve() in (
        ref_dir.resolve(),
        *ref_dir.resolve().parents,
    )
    with output_dir(
        out,
        command='study',
        overwrite=overwrite,
        # report/ (vepd report's default) describes the previous study: it goes with it
        replaces=['Sim', 'result.json', 'table1.csv', 'table2.csv', 'runs.csv', 'report']
        + ([] if ref_inside else ['Real']),
        info={'plan': {'runs': int(runs), 'models': [*models, *configured], 'scenarios': scen}},
    ) as stage:
        jobs += [(m, gps_of[m], s) for m in models for s in scen]
        jobs += [(label, gps_of[label], s) for label in configured for s in scen]
        if ref_dir is not None:
            batch, warns = scan_batch_dir(ref_dir, REFERENCE, 'Real')
            core.warnings += warns
            dest = stage / 'Real'
            dest.mkdir(exist_ok=True)
            for sc, lst in batch.runs.items():
                for _, p in lst:
                    if p.resolve() != (dest / p.name).resolve():
                        shutil.copy2(p, dest / p.name)
                        if sidecar_path(p).is_file():
                            shutil.copy2(sidecar_path(p), dest / sidecar_path(p).name)
                core.add_records(REFERENCE, sc, [read_run(dest / p.name) for _, p in lst])
        writers: dict[str, BatchWriter] = {}
        for side, _, _ in jobs:
            if side != REFERENCE:
                core.add_model(side, display_name(side))
            if side not in writers:
                writers[side] = BatchWriter(
                    stage,
                    'real' if side == REFERENCE else 'sim',
                    None if side == REFERENCE else side,
                    fsync=fsync,
                )
        specs = [(side, gps, sc, j) for side, gps, sc in jobs for j in range(1, runs + 1)]
        outputs = [writers[side].run_file(sc, j) for side, _, sc, j in specs]
        collected: dict[tuple[str, str], list[RunRecord]] = {}
        for recs in simulate_and_judge(
            specs,
            imu,
            duration_s,
            seed,
            judge=judge,
            ekf_yaml=ekf_yaml,
            navsat_yaml=navsat_yaml,
            workers=workers,
            progress=progress,
            outputs=outputs,
            fsync=fsync,
        ):
            written: dict[str, list[RunRecord]] = {}
            for r in recs:  # written by the worker; listed here, once per chunk
                side, sc = r.meta['label'], r.meta['scenario']
                written.setdefault(side, []).append(r)
                collected.setdefault((side, sc), []).append(r)
            for side, rs in written.items():
                writers[side].add_to_index(rs)
        for (side, sc), recs in collected.items():
            core.add_records(side, sc, sorted(recs, key=lambda r: r.meta['j']))
        res = core.result(include_runs=include_runs)
        res['study'] = {
            'models': list(models),
            **({'configured': {k: {'model': gps_of[k].model, 'params': gps_of[k].params,
                                   'rate_hz': gps_of[k].rate_hz, 'rate_used_hz': GPS_RATE_HZ}
                               for k in configured}}
               if configured else {}),
            'scenarios': scen,
            'runs': runs,
            'duration_s': duration_s,
            'reference': str(reference),
            'judge': judge,
            'seed': seed,
            'imu_model': imu.model,
        }
        res['root'] = str(out)
        # as `vepd evaluate OUT` says, from the records just scored: a --reference DIR may
        # itself hold simulated runs
        res['reference_model'] = core.provenance()['reference_model']
        saved = {k: v for k, v in res.items() if k not in ('runs', 'display_names')}
        text = json.dumps(saved, indent=1, allow_nan=False) + '\n'  # a result is finite (metrics)
        atomic_write_text(stage / 'result.json', text, fsync)
        if finish is not None:
            finish(stage, res)
        return res

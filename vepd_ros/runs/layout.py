# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Batches of runs on disk, in the authors' layout (which is also ours).

    <root>/Real/<scenario>_<j>.csv                      the reference (real) side
    <root>/Sim/<label>/<scenario>_<j>.csv               one folder per model under test
    <root>/Sim/<label>_results/<scenario>_<j>.csv       the authors' folder names
                                                        (label = name minus _results)

plus, in our batches, ``<scenario>_<j>.json`` sidecars and an ``index.json`` per batch folder
(written by ``BatchWriter``: one writer per folder, rewritten atomically after each run).

``scan_root`` finds every batch and names what it cannot use: an unknown scenario name is an error
(pass ``scenarios=`` to declare extra ones), gaps in run numbers, stray files, runs listed in an
index but missing, and sidecars without their CSV (an interrupted write) are warnings — nothing is
skipped silently.

Bounds and names: a run number j above ``MAX_RUN_INDEX`` is an error (a stray
``straight_1000000000.csv`` is named, never expanded into a range); the gap check costs one pass
over the files, whatever their j. A model folder named ``real`` (any case, with or without
``_results``) is refused: it would be read as the reference side. ``BatchWriter`` passes every
label and scenario through ``safety.safe_component`` before it becomes a path, so nothing is
written outside the batch root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path
import re
from typing import Sequence

from vepd_ros.fileio import atomic_write_text, is_temp_name, load_json, remove_stale_temps
from vepd_ros.metrics.records import RunRecord
from vepd_ros.naming import folder_label, is_reference_label, SCENARIO_ORDER, scenario_sort_key
from vepd_ros.runs.format import RunFileError, write_run
from vepd_ros.runs.safety import safe_component
from vepd_ros.yamlio import quote


# Display names (Table I). The authors' folder labels and ours (design.md §4).
AUTHORS_MODELS = {
    'chNormal': 'Ch:Gauss',
    'chWalk': 'Ch:RW',
    'AirSim': 'AirSim',
    'chNormal_AirSim': 'Ch:Gauss+AirSim',
    'chWalk_AirSim': 'Ch:RW+AirSim',
    'baseline': 'Baseline',
    'gazebo': 'Gazebo',
}
OUR_MODELS = {
    'none': 'None',
    'ch_gauss': 'Ch:Gauss',
    'ch_rw': 'Ch:RW',
    'airsim': 'AirSim',
    'ch_gauss+airsim': 'Ch:Gauss+AirSim',
    'ch_rw+airsim': 'Ch:RW+AirSim',
}
_MODEL_ORDER = list(AUTHORS_MODELS) + list(OUR_MODELS)

RUN_FILE_RE = re.compile(r'^(?P<scenario>.+)_(?P<j>\d+)\.csv$')
"""A run file's name, ``<scenario>_<j>.csv`` (``run_file_name`` writes it): the one pattern."""
INDEX_NAME = 'index.json'
MAX_RUN_INDEX = 1_000_000
"""Largest run number j of a ``<scenario>_<j>.csv`` in a batch (files beyond it are refused)."""


def run_file_name(scenario: str, j: int) -> str:
    """Return the file name of run ``j`` of ``scenario``: ``<scenario>_<j>.csv``."""
    return f'{scenario}_{j}.csv'


def run_index(path: Path, digits: str) -> int:
    """
    Parse the run index j of a run file name.

    J of a run file name, bounded by ``MAX_RUN_INDEX`` (the digits are never converted when
    longer).
    """
    if len(digits) > len(str(MAX_RUN_INDEX)) or int(digits) > MAX_RUN_INDEX:
        raise ValueError(
            f'{path.parent}/{quote(path.name, 60)}: run number {quote(digits, 20)} '
            f'is above the limit of {MAX_RUN_INDEX} runs per scenario; rename or '
            f'remove the file'
        )
    return int(digits)


def missing_indices(js: Sequence[int], limit: int = 10) -> tuple[int, list[int]]:
    """
    Count the numbers missing between min(js) and max(js) and list the first of them.

    (how many numbers between min(js) and max(js) are missing, the first ``limit`` of them) for
    sorted ``js``, in one pass over the gaps (never a range as long as the largest j).
    """
    n, first = 0, []
    for a, b in zip(js, js[1:]):
        if b - a > 1:
            n += b - a - 1
            first += list(range(a + 1, min(b, a + 1 + limit - len(first))))
    return n, first


def read_index(index: Path) -> dict:
    """
    Read and check a batch ``index.json``.

    A batch ``index.json``: an object whose ``runs`` is a list of objects with a run file name
    as ``file`` (never a path); else ``RunFileError`` naming the file and field. ``display_name``
    is checked by ``index_display_name``.
    """
    d = load_json(index, what='batch index')
    runs = d.get('runs', [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise RunFileError(f"{index}: field 'runs' must be a list of objects, got {quote(runs)}")
    for r in runs:
        f = r.get('file')
        if not (isinstance(f, str) and RUN_FILE_RE.match(f) and '/' not in f and '\\' not in f):
            raise RunFileError(
                f"{index}: a run's 'file' must be a run file name "
                f'(<scenario>_<j>.csv), '
                f'got {quote(f)}'
            )
    return d


def index_display_name(index: Path, d: dict) -> str | None:
    """
    Return the index's ``display_name``, checked.

    The index's ``display_name`` (None when absent); a value that is not a short string is an
    error.
    """
    dn = d.get('display_name')
    if dn is not None and not (isinstance(dn, str) and 0 < len(dn) <= 200):
        raise RunFileError(
            f"{index}: field 'display_name' must be a non-empty string of at "
            f'most 200 characters, got {quote(dn)}'
        )
    return dn


def display_name(label: str) -> str:
    return AUTHORS_MODELS.get(label) or OUR_MODELS.get(label) or label


@dataclass
class BatchDir:
    side: str  # 'real' or the model label
    folder: Path
    display_name: str
    runs: dict[str, list[tuple[int, Path]]] = field(
        default_factory=dict
    )  # scenario -> [(j, csv)] by j

    def counts(self) -> dict[str, int]:
        return {s: len(v) for s, v in self.runs.items()}


@dataclass
class Layout:
    root: Path
    real: BatchDir
    models: dict[str, BatchDir]
    warnings: list[str] = field(default_factory=list)


def scan_batch_dir(
    folder, side: str, display: str | None = None, scenarios=None
) -> tuple[BatchDir, list[str]]:
    """
    Read the runs of one batch folder.

    Raises for unknown scenario names, returns warnings for the rest.
    """
    folder = Path(folder)
    known = set(SCENARIO_ORDER) | set(scenarios or ())
    warnings: list[str] = []
    runs: dict[str, list[tuple[int, Path]]] = {}
    unknown: dict[str, list[str]] = {}
    csvs = set()
    for p in sorted(folder.iterdir()):
        if p.is_dir():
            warnings.append(f'{p}: sub-folder ignored (runs are <scenario>_<j>.csv files)')
            continue
        if is_temp_name(p.name):
            warnings.append(f'{p}: temporary file of an unfinished write ignored')
            continue
        m = RUN_FILE_RE.match(p.name)
        if m:
            if m['scenario'] not in known:
                unknown.setdefault(m['scenario'], []).append(p.name)
                continue
            runs.setdefault(m['scenario'], []).append((run_index(p, m['j']), p))
            csvs.add(p.stem)
        elif p.suffix == '.json' and (p.name == INDEX_NAME or RUN_FILE_RE.match(p.stem + '.csv')):
            continue
        else:
            warnings.append(f'{p}: not a run file (<scenario>_<j>.csv), ignored')
    if unknown:
        ex = '; '.join(
            f'{quote(s)} ({", ".join(quote(x) for x in v[:3])}{", ..." if len(v) > 3 else ""})'
            for s, v in sorted(unknown.items())[:5]
        )
        ex += '; ...' if len(unknown) > 5 else ''
        raise ValueError(
            f'{folder}: unknown scenario name(s) {ex}; expected one of '
            f'{", ".join(SCENARIO_ORDER)} '
            f'(declare others with scenarios=... / --scenarios)'
        )
    for p in sorted(folder.glob('*.json')):
        if p.name != INDEX_NAME and p.stem not in csvs and RUN_FILE_RE.match(p.stem + '.csv'):
            warnings.append(
                f'{p}: sidecar without its run file (a write that never completed); run not '
                f'counted'
            )
    for s, lst in runs.items():
        lst.sort()
        js = [j for j, _ in lst]
        n_gaps, gaps = missing_indices(js)
        if n_gaps:
            warnings.append(
                f'{folder}: {s} runs {js[0]}..{js[-1]} miss '
                f'j = {", ".join(map(str, gaps))}'
                f'{", ..." if n_gaps > len(gaps) else ""}'
            )
    index = folder / INDEX_NAME
    if index.is_file():
        try:
            idx = read_index(index)
        except RunFileError as exc:
            warnings.append(f'unreadable batch index ({exc}); the run files themselves are used')
            idx = {}
        missing = [r['file'] for r in idx.get('runs', []) if not (folder / r['file']).is_file()]
        if missing:
            warnings.append(
                f'{index}: {len(missing)} indexed run(s) missing on disk: {", ".join(missing[:5])}'
            )
        if display is None:
            display = index_display_name(index, idx)  # a wrong one would be shown: refused
    ordered = {s: runs[s] for s in sorted(runs, key=scenario_sort_key)}
    return BatchDir(side, folder, display or display_name(side), ordered), warnings


def scan_root(root, scenarios=None) -> Layout:
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f'{root}: no such directory')
    real_dir, sim_dir = root / 'Real', root / 'Sim'
    if not real_dir.is_dir():
        raise FileNotFoundError(
            f'{root}: no Real/ folder (expected <root>/Real/<scenario>_<j>.csv and '
            f'<root>/Sim/<model>/<scenario>_<j>.csv)'
        )
    if not sim_dir.is_dir():
        raise FileNotFoundError(
            f'{root}: no Sim/ folder (expected <root>/Sim/<model>/<scenario>_<j>.csv)'
        )
    warnings: list[str] = []
    real, w = scan_batch_dir(real_dir, 'real', 'Real', scenarios)
    warnings += w
    if not real.runs:
        raise ValueError(f'{real_dir}: no run files (<scenario>_<j>.csv)')
    folders: dict[str, Path] = {}
    for p in sorted(sim_dir.iterdir()):
        if not p.is_dir():
            warnings.append(f'{p}: not a model folder, ignored')
            continue
        label = folder_label(p.name)
        if is_reference_label(label):
            raise ValueError(
                f"{p}: a model folder cannot be named {label!r}: 'real' is the "
                f'reference side (Real/); rename the folder'
            )
        if label in folders:
            raise ValueError(
                f'{sim_dir}: both {folders[label].name}/ and {p.name}/ hold model {label!r}'
            )
        folders[label] = p
    if not folders:
        raise ValueError(f'{sim_dir}: no model folders')
    models = {}
    order = sorted(
        folders,
        key=lambda lb: (_MODEL_ORDER.index(lb) if lb in _MODEL_ORDER else len(_MODEL_ORDER), lb),
    )
    for label in order:
        b, w = scan_batch_dir(folders[label], label, None, scenarios)
        warnings += w
        if not b.runs:
            raise ValueError(f'{folders[label]}: no run files (<scenario>_<j>.csv)')
        models[label] = b
    return Layout(root, real, models, warnings)


class BatchWriter:
    """
    Writer of one batch folder's runs and of its ``index.json``.

    Writes the runs of one batch folder (``Real/`` or ``Sim/<label>/``) and keeps its
    ``index.json``.

    ``write`` puts run j of a scenario under its final name atomically (sidecar, then CSV), then
    rewrites the index atomically; a kill at any point leaves every earlier run complete and
    listed.
    """

    def __init__(
        self,
        root,
        side: str = 'sim',
        label: str | None = None,
        display: str | None = None,
        fsync: bool = True,
    ):
        root = Path(root)
        if side == 'real':
            self.folder = root / 'Real'
            self.label = 'real'
        elif side == 'sim':
            if not label:
                raise ValueError('BatchWriter: a sim batch needs a label (its folder Sim/<label>)')
            safe_component('label', label)
            if is_reference_label(label):
                raise ValueError(
                    f'BatchWriter: a sim batch cannot be labelled {label!r}: '
                    f"'real' is the reference side (Real/)"
                )
            self.folder = root / 'Sim' / label
            self.label = label
        else:
            raise ValueError(f"BatchWriter: side must be 'real' or 'sim', got {side!r}")
        self.side = side
        self.fsync = fsync
        self.folder.mkdir(parents=True, exist_ok=True)
        self.removed_temps = remove_stale_temps(self.folder)
        self.index_path = self.folder / INDEX_NAME
        self.index = {
            'format': 'vepd_ros.batch/1',
            'side': side,
            'label': self.label,
            'display_name': display or display_name(self.label),
            'runs': [],
        }
        if self.index_path.is_file():
            try:
                old = read_index(self.index_path)
                self.index['runs'] = [
                    r for r in old.get('runs', []) if (self.folder / r['file']).is_file()
                ]
            except RunFileError:
                pass  # rebuilt from the runs this writer adds

    def next_index(self, scenario: str) -> int:
        """1-based like the authors' files: one past the highest j on disk or in the index."""
        safe_component('scenario', scenario)
        js = [
            run_index(p, m['j'])
            for p in self.folder.glob(f'{glob_escape(scenario)}_*.csv')
            if (m := RUN_FILE_RE.match(p.name)) and m['scenario'] == scenario
        ]
        js += [r['j'] for r in self.index['runs'] if r.get('scenario') == scenario]
        return max(js, default=0) + 1

    def run_file(self, scenario: str, j: int, meta: dict | None = None) -> tuple[Path, dict]:
        """
        Return (path, sidecar fields) of run j of a scenario in this folder.

        (path, sidecar fields) of run j of a scenario in this folder — what ``write`` passes to
        ``write_run``; a writer elsewhere (a worker process) writes the run with them, then
        ``add_to_index`` lists it.
        """
        safe_component('scenario', scenario)
        j = int(j)
        if not 0 <= j <= MAX_RUN_INDEX:
            raise ValueError(f'run number {j} outside 0..{MAX_RUN_INDEX}')
        m = {'side': self.side, 'label': self.label, 'scenario': scenario, 'j': j}
        m.update(meta or {})
        return self.folder / run_file_name(scenario, j), m

    def write(
        self, rec: RunRecord, scenario: str, meta: dict | None = None, j: int | None = None
    ) -> Path:
        if j is None:
            j = self.next_index(scenario)
        path, m = self.run_file(scenario, j, meta)
        write_run(path, rec, m, self.fsync)
        self.add_to_index([rec])
        return path

    def add_to_index(self, records: Sequence[RunRecord]) -> None:
        """
        List runs already written into this folder, then rewrite the index once.

        List runs already written into this folder (``rec.path`` set by ``write_run``), in order —
        a run written again replaces its entry and moves to the end —, then rewrite the index once.
        """
        for rec in records:
            name = Path(rec.path).name
            m = RUN_FILE_RE.match(name)  # <scenario>_<j>.csv, as run_file named it
            if m is None:
                raise ValueError(f'{rec.path}: not a run file name (<scenario>_<j>.csv)')
            self.index['runs'] = [r for r in self.index['runs'] if r['file'] != name]
            self.index['runs'].append(
                {
                    'file': name,
                    'scenario': m['scenario'],
                    'j': int(m['j']),
                    'se_len': int(len(rec.se_t)),
                    'gt_len': int(len(rec.gt_t)),
                }
            )
        atomic_write_text(self.index_path, json.dumps(self.index, indent=1) + '\n', self.fsync)


def glob_escape(s: str) -> str:
    return re.sub(r'([\[\]*?])', r'[\1]', s)

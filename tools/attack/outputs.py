# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The attack classes of issue 24, registered into attack.py's case list (area 'i24').

Multi-step classes on every command that writes (study, bag, evaluate, tune, report, sensors
simulate, run, demo; the files of judge replay, calibrate, sensors from-sdf; a graph node's
output_dir): a re-run into the same output, a refused re-run, a re-run killed by SIGINT, SIGTERM
or SIGKILL mid-run, two writers at once, a directory of real runs as the output — each checking
that the earlier output is byte for byte as it was, that a signal ends with exit 130/143 and one
line (no traceback), and that nothing hangs. Single-step classes: FIFOs and devices as inputs,
big YAML/JSON, deep XML, flag products too large for memory, model names holding '/'.

Each multi-step case is a ``special`` callable ``(case, sandbox, out) -> (class, why)``.
"""

from contextlib import contextmanager
import hashlib
import json
import os
from pathlib import Path
import shutil
import signal
import stat
import subprocess
import time

H = 'i24'
SIG_RC = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -9}


class Env:
    """What attack.py passes in: VEPD, FIX, REPO, limits, NMEA."""


E = Env()


def _files(root: Path) -> dict:
    """Regular files under root (or root itself) with their sha1; nothing else is opened."""
    out = {}
    if root.is_file():
        return {'.': hashlib.sha1(root.read_bytes()).hexdigest()}
    if not root.is_dir():
        return out
    for p in sorted(root.rglob('*')):
        try:
            st = p.lstat()
            if stat.S_ISREG(st.st_mode):
                out[p.relative_to(root).as_posix()] = hashlib.sha1(p.read_bytes()).hexdigest()
                continue
        except FileNotFoundError:  # a live file's journal, gone between listing and reading
            continue
        if stat.S_ISDIR(st.st_mode):
            out[p.relative_to(root).as_posix() + '/'] = 'dir'
    return out


SQLITE_COMPANIONS = ('-journal', '-wal', '-shm')
"""SQLite's transient files beside a database it is writing: live with the database itself."""


def _kept(spec, out: Path) -> dict:
    """
    Return the output's files but those the command updates in place (``Spec.live``).

    A live SQLite file's journal is live too: a snapshot taken while the first writer is inside a
    transaction on study.db sees study.db-journal (the one DATA LOSS of i24_tune_concurrent in a
    fresh-clone run under load on 2026-11-28, where every other file was the first output's; CI
    caught test_cli_signals' extending tune with exactly that extra file the same day).
    """
    live = {f + c for f in spec.live for c in ('', *SQLITE_COMPANIONS)}
    return {k: v for k, v in _files(out).items() if k not in live}


def _leftovers(out: Path) -> list:
    """Staging directories and locks of writers that are gone, beside out."""
    return [p.name for p in out.parent.iterdir()
            if p.name.startswith(f'.{out.name}.vepd-') or p.name.startswith(f'.{out.name}.tmp')]


def _env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', COLUMNS='120')
    env.pop('ROS_DOMAIN_ID', None)
    return env


def _run(argv, cwd, timeout=240):
    """Run vepd as attack.py's single cases do (its run_cmd: limits, environment, timeout)."""
    r = E.run_cmd(argv, cwd, timeout)
    return r.returncode, r.stdout, r.stderr, r.hang, r.secs


def _start(argv, cwd, errfile):
    return subprocess.Popen([E.VEPD] + argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=open(errfile, 'w'), preexec_fn=E.limits, env=_env())


def _wait_busy(p, out: Path, secs=120.0, after=None) -> bool:
    """Wait until the command is writing (its staging directory beside out exists)."""
    t0 = time.time()
    if after is not None:
        time.sleep(after)
        return p.poll() is None
    while time.time() - t0 < secs and p.poll() is None:
        if any('vepd-stage' in n for n in _leftovers(out)):
            time.sleep(1.0)  # well inside its run
            return True
        time.sleep(0.1)
    return p.poll() is None


def _stop(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def _tb(err):
    return 'Traceback' in err or 'MemoryError' in err


class Spec:
    """One command under attack: how to make a good, a slow and a refused run into OUT."""

    def __init__(self, name, good, slow=None, refused=None, kind='dir', setup=None,
                 timeout=300, classes=None, busy_after=None, appends=False, live=(),
                 earlier=True):
        self.name, self.good, self.slow, self.refused = name, good, slow, refused
        self.kind, self.setup, self.timeout = kind, setup, timeout
        self.classes = classes
        # seconds after which the slow run is mid-way (a command that computes before it
        # starts writing has no staging directory to wait for)
        self.busy_after = busy_after
        self.appends = appends  # a re-run adds to the output (vepd bag numbers after it)
        # updated in place by design (tune's study storage: a killed run's trials stay in it)
        self.live = live
        # False: no earlier output is made first (vepd demo takes minutes on a busy machine):
        # the killed run must then leave no output at all
        self.earlier = earlier


def _first(spec, sb, out):
    """Make the earlier output (a good run into out); None, or (class, why) when it failed."""
    if not spec.earlier:
        return None
    rc, o, e, hang, _ = _run(spec.good(out), sb / 'cwd', spec.timeout)
    if hang or rc != 0:
        return 'HARNESS', f'the first (good) run failed: exit {rc}: {e.strip()[-200:]}'
    return None


def _again(spec, sb, out, argv_of):
    """Make the earlier output, then run ``argv_of(out)`` into it: (first files, rc, stderr)."""
    bad = _first(spec, sb, out)
    if bad:
        return bad, None, None
    first = _kept(spec, out)
    rc, o, e, hang, _ = _run(argv_of(out), sb / 'cwd', spec.timeout)
    return (('HANG', 'the re-run'), None, None) if hang else (first, rc, e)


def rerun_same(spec):
    def go(c, sb, out):
        first, rc, e = _again(spec, sb, out, spec.good)
        if e is None:
            return first
        if _tb(e):
            return 'TRACEBACK', e.strip().splitlines()[-1][:150]
        if rc != 0:
            return 'WRONG EXIT', f're-run into its own output: exit {rc}: {e.strip()[-150:]}'
        now = _kept(spec, out)
        if spec.appends:
            changed = [k for k in first if now.get(k) != first[k] and k != '.vepd-output.json'
                       and not k.endswith('index.json')]
            if changed or len(now) <= len(first):
                return 'SILENT', f'a re-run that adds runs changed {changed[:3]} or added none'
        elif sorted(now) != sorted(first):
            return 'SILENT', (f'the re-run left other files: +{sorted(set(now) - set(first))[:3]}'
                              f' -{sorted(set(first) - set(now))[:3]}')
        if _leftovers(out):
            return 'SILENT', f'left beside the output: {_leftovers(out)[:3]}'
        return 'OK', 're-run replaced its own output whole'
    return go


def rerun_refused(spec):
    def go(c, sb, out):
        first, rc, e = _again(spec, sb, out, spec.refused)
        if e is None:
            return first
        if _kept(spec, out) != first:
            return 'DATA LOSS', f'a refused re-run (exit {rc}) changed the earlier output'
        if _tb(e):
            return 'TRACEBACK', e.strip().splitlines()[-1][:150]
        if rc != 2:
            return 'WRONG EXIT', f'refused re-run: exit {rc}'
        return 'OK', 'refused (exit 2), earlier output as it was'
    return go


@contextmanager
def _slow_writer(spec, sb, out, name):
    """Make the earlier output, start the slow run into it; yield (first files, process, err)."""
    bad = _first(spec, sb, out)
    if bad:
        yield bad, None, None
        return
    first = _kept(spec, out)
    errf = sb / f'{name}.err'
    p = _start(spec.slow(out), sb / 'cwd', errf)
    try:
        busy = _wait_busy(p, out, after=spec.busy_after) and p.poll() is None
        yield first, (p if busy else None), errf
    finally:
        _stop(p)


def rerun_killed(spec, sig):
    def go(c, sb, out):
        with _slow_writer(spec, sb, out, 'killed') as (first, p, errf):
            if errf is None:
                return first
            if p is None:
                return 'HARNESS', 'the slow run ended before the signal'
            os.kill(p.pid, sig)  # the command only (a terminal's Ctrl-C is tried by the tests)
            try:
                p.wait(timeout=90)
            except subprocess.TimeoutExpired:
                return 'HANG', f'{sig.name}: still running 90 s after the signal'
            if p.returncode == 0:  # it finished between the check and the signal
                return 'HARNESS', 'the slow run ended before the signal'
        err = errf.read_text(errors='replace')
        if _kept(spec, out) != first:
            return 'DATA LOSS', f'{sig.name} mid-run changed the earlier output'
        if _tb(err):
            return 'TRACEBACK', err.strip().splitlines()[-1][:150]
        if p.returncode != SIG_RC[sig]:
            return 'WRONG EXIT', f'{sig.name}: exit {p.returncode}, expected {SIG_RC[sig]}'
        if sig != signal.SIGKILL:
            last = (err.strip().splitlines() or [''])[-1]
            if 'stopped by' not in last:
                return 'WRONG EXIT', f'{sig.name}: no closing line saying what was kept: {last}'
        if not spec.earlier:
            return 'OK', f'{sig.name}: exit {SIG_RC[sig]}, no output left'
        # the next writer clears what a killed one left and writes normally
        rc, o, e, hang, _ = _run(spec.good(out), sb / 'cwd', spec.timeout)
        if hang or rc != 0:
            return 'WRONG EXIT', f'the run after {sig.name}: exit {rc}: {e.strip()[-150:]}'
        if _leftovers(out):
            return 'SILENT', f'left beside the output after the next run: {_leftovers(out)}'
        return 'OK', f'{sig.name}: exit {SIG_RC[sig]}, earlier output as it was'
    return go


def concurrent(spec):
    def go(c, sb, out):
        with _slow_writer(spec, sb, out, 'first') as (first, p, errf):
            if errf is None:
                return first
            if p is None:
                return 'HARNESS', 'the slow writer ended early'
            rc, o, e, hang, _ = _run(spec.good(out), sb / 'cwd', spec.timeout)
            during = _kept(spec, out)
            if p.poll() is not None:
                if rc == 2 and str(p.pid) in e and not _tb(e):
                    # refused naming it: the first still held the lock when the second tried
                    # (the first then finished and swapped its own output in)
                    return 'OK', 'second writer refused naming the first'
                return 'HARNESS', f'the slow writer ended while the second ran ({p.returncode})'
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=90)
            except subprocess.TimeoutExpired:
                return 'HANG', 'the first writer did not end on SIGTERM'
        if during != first or _kept(spec, out) != first:
            return 'DATA LOSS', f'a second writer (exit {rc}) changed the output'
        if hang:
            return 'HANG', 'second writer'
        if _tb(e):
            return 'TRACEBACK', e.strip().splitlines()[-1][:150]
        if rc == 0:
            return 'SILENT', 'two writers on one output both ran'
        if rc != 2 or str(p.pid) not in e:
            return 'WRONG EXIT', f'second writer: exit {rc}, not naming pid {p.pid}: {e[-150:]}'
        return 'OK', 'second writer refused naming the first'
    return go


def foreign_dir(spec):
    def go(c, sb, out):
        (out / 'Real').mkdir(parents=True)
        for f in sorted((E.FIX / 'study' / 'Real').glob('*'))[:4]:
            shutil.copy2(f, out / 'Real' / f.name)
        first = _kept(spec, out)
        rc, o, e, hang, _ = _run(spec.good(out), sb / 'cwd', spec.timeout)
        if _kept(spec, out) != first:
            return 'DATA LOSS', f'a directory of real runs as the output was written (exit {rc})'
        if hang:
            return 'HANG', ''
        if _tb(e):
            return 'TRACEBACK', e.strip().splitlines()[-1][:150]
        if rc != 2 or str(out) not in e:
            return 'WRONG EXIT', f'exit {rc}, not naming {out}: {e.strip()[-150:]}'
        return 'OK', 'refused, naming it'
    return go


def file_rerun(spec):
    def go(c, sb, out):
        bad = _first(spec, sb, out)
        if bad:
            return bad
        f = Path(spec.good(out)[-1])
        first = _files(f)
        rc, o, e, hang, _ = _run(spec.good(out), sb / 'cwd', spec.timeout)
        if _files(f) != first:
            return 'DATA LOSS', f'an existing --out file replaced without --overwrite (exit {rc})'
        if hang or _tb(e) or rc != 2 or '--overwrite' not in e:
            return 'WRONG EXIT', f'exit {rc}: {e.strip()[-150:]}'
        rc, o, e, hang, _ = _run(spec.good(out) + ['--overwrite'], sb / 'cwd', spec.timeout)
        if rc != 0 or _tb(e):
            return 'WRONG EXIT', f'--overwrite: exit {rc}: {e.strip()[-150:]}'
        return 'OK', 'refused without --overwrite, replaced with it'
    return go


def node_output_dir(c, sb, out):
    """Start a recorder node (as ros2 launch does) on a study as output_dir: refused, exit 2."""
    study = sb / 'in' / 'study'
    shutil.copytree(E.FIX / 'study', study)
    first = _files(study)
    exe = E.REPO / '.venv' / 'bin' / 'recorder_node'
    p = subprocess.run([str(exe), '--ros-args', '-p', f'output_dir:={study}'], cwd=sb / 'cwd',
                       capture_output=True, text=True, timeout=120, env=_env(),
                       preexec_fn=E.limits)
    if _files(study) != first:
        return 'DATA LOSS', 'the node wrote into a study'
    if _tb(p.stderr):
        return 'TRACEBACK', p.stderr.strip().splitlines()[-1][:150]
    if p.returncode != 2 or 'output_dir' not in p.stderr:
        return 'WRONG EXIT', f'exit {p.returncode}: {p.stderr.strip()[-150:]}'
    return 'OK', 'recorder_node refused the study as output_dir (exit 2)'


SDF = """<?xml version="1.0"?>
<sdf version="1.9"><model name="car"><link name="base_link">
  <sensor name="navsat" type="navsat"><update_rate>5</update_rate><navsat><position_sensing>
    <horizontal><noise type="gaussian"><stddev>2e-6</stddev></noise></horizontal>
  </position_sensing></navsat></sensor>
</link></model></sdf>
"""


def _big_study(models: int = 40) -> str:
    """FIX/study with its Sim/ch_rw copied into ``models`` model folders (made once)."""
    big = E.FIX / 'study_big'
    if not big.is_dir():
        tmp = E.FIX / '.study_big.tmp'
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(E.FIX / 'study', tmp)
        for i in range(models):
            shutil.copytree(tmp / 'Sim' / 'ch_rw', tmp / 'Sim' / f'm{i}')
        tmp.rename(big)
    return str(big)


def specs():
    fix, repo = E.FIX, E.REPO
    study = ['study', '--models', 'ch_rw', '--scenarios', 'circle', '--runs', '2', '--duration',
             '3', '--reference', 'rtk', '--n-boot', '0', '--quiet', '--out']
    tune = ['tune', '--model', 'ch_rw', '--params', 'rw_sigma', '--reference', 'rtk',
            '--scenarios', 'circle', '--runs', '2', '--duration', '3', '--no-landscape',
            '--quiet', '--out']
    graph = ['run', 'sim_judge', 'k:=2', 'models:=ch_rw', 'scenarios:=circle']
    bag = ['bag', str(fix / 'bags/good_art'), '--profile', 'art', '--quiet', '--scenario',
           'circle']
    return [
        Spec('study', lambda o: study + [str(o)],
             lambda o: ['study', '--models', 'ch_rw,ch_gauss,airsim', '--scenarios',
                        'circle,sine', '--runs', '10', '--duration', '120', '--reference', 'rtk',
                        '--n-boot', '0', '--quiet', '--out', str(o)],
             lambda o: study + [str(o), '--judge', 'nosuch']),
        Spec('evaluate', lambda o: ['evaluate', str(fix / 'study'), '--n-boot', '0', '--out',
                                    str(o)],
             # slow: 40 models' bootstrap; busy once its staging directory exists
             lambda o: ['evaluate', _big_study(), '--n-boot', '100000', '--out', str(o)],
             lambda o: ['evaluate', str(fix / 'nosuch'), '--out', str(o)]),
        Spec('report', lambda o: ['report', str(fix / 'study'), '--n-boot', '0', '--no-progress',
                                  '--out', str(o)],
             lambda o: ['report', str(fix / 'study'), '--n-boot', '100000', '--no-progress',
                        '--out', str(o)],
             lambda o: ['report', str(fix / 'nosuch'), '--out', str(o)]),
        Spec('bag', lambda o: bag + ['--out', str(o)],
             lambda o: ['bag'] + [str(fix / 'bags/good_art')] * 40
             + ['--profile', 'art', '--quiet', '--scenario', 'circle', '--out', str(o)],
             lambda o: bag + ['--out', str(o), '--side', 'sim'], appends=True),
        Spec('sensors', lambda o: ['sensors', 'simulate', '--scenario', 'circle', '--duration',
                                   '5', '--out', str(o)],
             lambda o: ['sensors', 'simulate', '--scenario', 'circle', '--duration', '4000',
                        '--out', str(o)],
             lambda o: ['sensors', 'simulate', '--scenario', 'circle', '--gps', 'nosuch',
                        '--out', str(o)]),
        Spec('tune', lambda o: tune + [str(o), '--trials', '2'],
             lambda o: tune + [str(o), '--trials', '300'],
             lambda o: tune + [str(o), '--trials', '2', '--sampler', 'cmaes', '--pareto'],
             live=('study.db',)),
        Spec('run', lambda o: graph + ['duration_s:=4', f'output_dir:={o}', '--quiet'],
             lambda o: graph + ['duration_s:=200', f'output_dir:={o}', '--quiet'],
             lambda o: graph + ['duration_s:=4', 'models:=a/b', f'output_dir:={o}', '--quiet']),
        Spec('demo', lambda o: ['demo', '--quiet', '--out', str(o)],
             lambda o: ['demo', '--quiet', '--out', str(o)],
             classes=('foreign', 'sigint'), earlier=False),
        Spec('judge_replay', lambda o: ['judge', 'replay', '--ekf-config',
                                        str(repo / 'config/ekf.yaml'), '--navsat-config',
                                        str(repo / 'config/navsat.yaml'),
                                        str(fix / 'bags/good'), '--out', f'{o}.csv'],
             kind='file'),
        Spec('calibrate', lambda o: ['calibrate', 'gps', str(E.NMEA), '--out', f'{o}.yaml'],
             kind='file'),
        Spec('sensors_from_sdf',
             lambda o: ['sensors', 'from-sdf', str(o.parents[3] / 'in' / 'car.sdf'),
                        '--out', f'{o}.yaml'],
             kind='file'),
    ]


def register(case, env):
    """Add every issue-24 case to attack.py's list (``case`` is attack.case)."""
    for k, v in vars(env).items():
        setattr(E, k, v)
    for s in specs():
        if s.kind == 'file':
            setup = ((lambda sb: (sb / 'in' / 'car.sdf').write_text(SDF))
                     if s.name == 'sensors_from_sdf' else None)
            case(f'i24_{s.name}_rerun_file', H, None, setup=setup, special=file_rerun(s))
            continue
        classes = s.classes or ('same', 'refused', 'sigint', 'sigterm', 'sigkill', 'concurrent',
                                'foreign')
        table = {
            'same': rerun_same, 'refused': rerun_refused, 'concurrent': concurrent,
            'foreign': foreign_dir,
            'sigint': lambda sp: rerun_killed(sp, signal.SIGINT),
            'sigterm': lambda sp: rerun_killed(sp, signal.SIGTERM),
            'sigkill': lambda sp: rerun_killed(sp, signal.SIGKILL),
        }
        for cl in classes:
            if cl in ('refused',) and s.refused is None:
                continue
            case(f'i24_{s.name}_{cl}', H, None, special=table[cl](s))
    case('i24_node_output_dir_study', H, None, special=node_output_dir)
    _single(case)


def _fifo(name):
    def setup(sb):
        os.mkfifo(sb / 'in' / name)
    return setup


def _link(name, target):
    def setup(sb):
        os.symlink(target, sb / 'in' / name)
    return setup


def _big_yaml(name, n_bytes=750_000):
    def setup(sb):
        lines, i = ['junk:'], 0
        while sum(map(len, lines)) < n_bytes:
            lines.append(f'  - [{i * 0.001}, {i}, x{i}]')
            i += 1
        (sb / 'in' / name).write_text('\n'.join(lines) + '\n')
    return setup


def _dup_yaml(name):
    def setup(sb):
        (sb / 'in' / name).write_text(
            'gps_noise_node:\n  ros__parameters:\n    model: ch_gauss\n    model: ch_rw\n')
    return setup


def _deep_xml(name, depth=100_000):
    def setup(sb):
        (sb / 'in' / name).write_text('<?xml version="1.0"?>' + '<a>' * depth + '</a>' * depth)
    return setup


def _big_json_root(sb):
    root = sb / 'in' / 'root'
    shutil.copytree(E.FIX / 'study', root)
    idx = root / 'Real' / 'index.json'
    d = json.loads(idx.read_text()) if idx.is_file() else {}
    d['padding'] = [{'file': f'x{i}.csv', 'junk': [i * 0.5] * 8} for i in range(12_000)]
    idx.write_text(json.dumps(d))


def _fifo_index(sb):
    root = sb / 'in' / 'root'
    shutil.copytree(E.FIX / 'study', root)
    idx = root / 'Real' / 'index.json'
    if idx.exists():
        idx.unlink()
    os.mkfifo(idx)


def _single(case):
    repo, fix = E.REPO, E.FIX
    jr = lambda ekf: ['judge', 'replay', '--ekf-config', ekf, '--navsat-config',  # noqa: E731
                      str(repo / 'config/navsat.yaml'), str(fix / 'bags/good'), '--out',
                      '{out}.csv']
    study = ['study', '--models', 'ch_rw', '--scenarios', 'circle', '--runs', '2', '--duration',
             '3', '--reference', 'rtk', '--n-boot', '0', '--quiet', '--out', '{out}']
    sites = [
        ('judge_ekf', jr('{in}/%s.yaml'), 'yaml'),
        ('study_gps_config', study + ['--gps-config', '{in}/%s.yaml'], 'yaml'),
        ('study_gps_config_sdf', study + ['--gps-config', '{in}/%s.sdf'], 'sdf'),
        ('from_sdf', ['sensors', 'from-sdf', '{in}/%s.sdf'], 'sdf'),
        ('calibrate_gps', ['calibrate', 'gps', '{in}/%s.log'], 'log'),
        ('calibrate_imu_csv', ['calibrate', 'imu', '{in}/%s.csv', '--quiet'], 'csv'),
        ('simulate_gps_params', ['sensors', 'simulate', '--gps-params', '{in}/%s.yaml', '--out',
                                 '{out}'], 'yaml'),
        ('tune_ekf', ['tune', '--model', 'ch_rw', '--params', 'rw_sigma', '--reference', 'rtk',
                      '--scenarios', 'circle', '--runs', '2', '--duration', '3', '--trials', '1',
                      '--ekf-config', '{in}/%s.yaml', '--out', '{out}'], 'yaml'),
    ]
    for site, argv, ext in sites:
        name = f'f.{ext}'
        case(f'i24_fifo_{site}', H, [a.replace('%s', 'f') for a in argv], setup=_fifo(name),
             timeout=60, hints=('fifo', 'special', name))
        case(f'i24_devzero_{site}', H, [a.replace('%s', 'f') for a in argv],
             setup=_link(name, '/dev/zero'), timeout=60, hints=('special', name))
    for site, argv, ext in sites:
        if ext == 'yaml':
            case(f'i24_bigyaml_{site}', H, [a.replace('%s', 'f') for a in argv],
                 setup=_big_yaml('f.yaml'), timeout=60, hints=('f.yaml', 'junk'))
        if ext == 'yaml':  # a key given twice: PyYAML would keep the last without a word
            case(f'i24_dupkey_{site}', H, [a.replace('%s', 'f') for a in argv],
                 setup=_dup_yaml('f.yaml'), timeout=60, hints=('f.yaml', 'twice'))
        if ext == 'sdf':
            case(f'i24_deepxml_{site}', H, [a.replace('%s', 'f') for a in argv],
                 setup=_deep_xml('f.sdf'), timeout=60, hints=('nested', 'f.sdf'))
    case('i24_fifo_evaluate_index', H, ['evaluate', '{in}/root', '--n-boot', '0'],
         setup=_fifo_index, timeout=60, expect='either', ok_rcs=(0, 4),
         hints=('fifo', 'index.json'))
    case('i24_bigjson_evaluate_index', H, ['evaluate', '{in}/root', '--n-boot', '0', '--json'],
         setup=_big_json_root, timeout=60, expect='either', ok_rcs=(0, 4), err_rcs=(2,),
         hints=('index.json',))
    for name, argv, hint in [
        ('study', ['study', '--models', 'ch_rw', '--scenarios', 'circle', '--runs', '1000',
                   '--duration', '19000', '--reference', 'rtk', '--out', '{out}'], '--runs'),
        ('simulate', ['sensors', 'simulate', '--duration', '19000', '--imu-rate', '1000',
                      '--out', '{out}'], '--duration'),
        ('tune', ['tune', '--model', 'ch_rw', '--params', 'rw_sigma', '--reference', 'rtk',
                  '--runs', '1000', '--duration', '19000', '--out', '{out}'], '--runs'),
    ]:
        case(f'i24_flags_product_{name}', H, argv, timeout=60, hints=(hint,))
    case('i24_slash_run_models', H, ['run', 'sim_judge', 'models:=a/b', 'k:=2', '--list'],
         hints=('models',))
    case('i24_slash_run_models_dotdot', H, ['run', 'sim_judge', 'models:=ch_rw,../x', '--list'],
         hints=('models',))
    case('i24_slash_study_label', H, study + ['--gps-config', 'a/b={in}/g.yaml'],
         setup=lambda sb: (sb / 'in' / 'g.yaml').write_text(
             'gps_noise_node:\n  ros__parameters:\n    model: ch_gauss\n'),
         hints=('label', 'g.yaml'))

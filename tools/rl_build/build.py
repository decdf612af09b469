#!/usr/bin/env python3

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Build robot_localization's ekf_node, ukf_node and navsat_transform_node against the venv's wheels.

    .venv/bin/python tools/rl_build/build.py [--sources ../shared/ros2_sources] [--jobs 2]

`make rl` runs it. This is the driver; what is built and every fix-up is in recipe.py. Steps, each
printed with its duration:
1. the wheels the build needs (requirements-rl.txt) installed into the venv when a pin is missing;
2. the cache key: the sources' SHA256SUMS, the installed ros-* wheel versions, the Debian -dev
   package versions, Python version and machine, recipe.py, cmake/ and requirements-rl.txt (not
   the venv's path); a complete build under `${XDG_CACHE_HOME:-~/.cache}/vepd_ros/rl/<key>` is
   reused as it is;
3. otherwise, in `<cache>/tmp-<key>-<pid>`: the archives checked against SHA256SUMS and unpacked;
   a shadow prefix of the venv (symlinks) in which the wheel CMake files recipe.FIXUPS fixes are
   fixed copies (the venv itself is not touched); colcon build of recipe.PACKAGES; copies of
   librcl*.so without their libpython-dependent entries; then the build and source trees are
   removed and the directory renamed to `<cache>/<key>` (atomic: a failed build leaves no cache
   entry, only its colcon logs under `<cache>/failed-<key>`);
4. `<venv>/vepd_rl.json` records the build, `<venv>/vepd_rl_env.sh` its environment
   (vepd_ros.rl_install is the one place that composes it).

Exit 2 naming the failing step or package, and its log, on error.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # the repo's vepd_ros.rl_install (make rl may run before make venv)
import recipe  # noqa: E402
from vepd_ros import rl_install  # noqa: E402

REQUIREMENTS = REPO / 'requirements-rl.txt'


def log(msg: str) -> None:
    """Print one progress line of the build (flushed: make and CI show it as it happens)."""
    print(f'make rl: {msg}', flush=True)


class BuildError(Exception):
    """A step failed; the message names it, `log` the log to read (relative to the log base)."""

    def __init__(self, message: str, log: Path | None = None):
        super().__init__(message)
        self.log = log


@contextlib.contextmanager
def step(name: str):
    """Time one step and print its duration."""
    t0 = time.monotonic()
    log(f'{name} ...')
    yield
    log(f'{name}: done in {time.monotonic() - t0:.1f} s')


def read_pins() -> dict:
    """Return requirements-rl.txt as {distribution name: version}."""
    pins = {}
    for line in REQUIREMENTS.read_text(encoding='utf-8').splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            name, _, version = line.partition('==')
            pins[_norm(name)] = version.strip()
    return pins


def _norm(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def installed_versions(venv: Path) -> dict:
    """Return {normalised distribution name: version} installed in the venv."""
    code = ('import importlib.metadata as m, json; '
            'print(json.dumps({d.metadata["Name"]: d.version for d in m.distributions()}))')
    out = subprocess.run([str(venv / 'bin' / 'python'), '-c', code], check=True,
                         capture_output=True, text=True).stdout
    return {_norm(k): v for k, v in json.loads(out).items() if k}


def ensure_wheels(venv: Path) -> dict:
    """Install requirements-rl.txt into the venv unless every pin is there; return the versions."""
    pins = read_pins()
    have = installed_versions(venv)
    missing = sorted(n for n, v in pins.items() if have.get(n) != v)
    if not missing:
        log(f'wheels: the {len(pins)} pins of requirements-rl.txt are installed')
        return have
    log(f'wheels: installing requirements-rl.txt ({len(missing)} missing: {", ".join(missing[:6])}'
        f'{", ..." if len(missing) > 6 else ""})')
    proc = subprocess.run(
        [str(venv / 'bin' / 'python'), '-m', 'pip', 'install', '-q', '--disable-pip-version-check',
         '-r', str(REQUIREMENTS)], capture_output=True, text=True)
    noise = re.compile(  # a machine-wide pip.conf listing absent local indexes (see Makefile)
        r"^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$")
    for line in (proc.stdout + proc.stderr).splitlines():
        if not noise.match(line):
            print(line)
    if proc.returncode != 0:
        raise BuildError(f'pip install -r {REQUIREMENTS.name} failed (exit {proc.returncode})')
    return installed_versions(venv)


def debian_versions() -> dict:
    """Return the installed versions of DEBIAN; raise BuildError naming the missing ones."""
    proc = subprocess.run(['dpkg-query', '-W', '-f', '${Package} ${db:Status-Abbrev} ${Version}\n',
                           *recipe.DEBIAN], capture_output=True, text=True)
    found = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith('ii'):
            found[parts[0]] = parts[2]
    missing = [p for p in recipe.DEBIAN if p not in found]
    if missing:
        raise BuildError(f'Debian packages missing: {" ".join(missing)} (install: apt-get install'
                         f' {" ".join(recipe.DEBIAN)}; .ci/run does)')
    return found


def read_sums(sources: Path) -> dict:
    """Return SHA256SUMS as {archive name: sha256}."""
    sums_file = sources / 'SHA256SUMS'
    if not sums_file.is_file():
        raise BuildError(f'{sums_file} not found: expected ../shared/ros2_sources beside the'
                         ' clone')
    sums = {}
    for n, line in enumerate(sums_file.read_text(encoding='utf-8').splitlines(), 1):
        if line.strip():
            parts = line.split()
            if len(parts) != 2 or not re.fullmatch(r'[0-9a-f]{64}', parts[0]):
                raise BuildError(f'{sums_file}:{n}: expected "<sha256>  <archive>", got {line!r}')
            sums[parts[1].lstrip('*')] = parts[0]
    return sums


def cache_key(sums_text: str, wheels: dict, debian: dict) -> tuple:
    """Return (key, inputs): the hash of everything the build's output depends on."""
    files = [HERE / 'recipe.py', *sorted((HERE / 'cmake').rglob('*')), REQUIREMENTS]
    own = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}
    inputs = {
        'SHA256SUMS': hashlib.sha256(sums_text.encode()).hexdigest(),
        'ros_wheels': {n: v for n, v in sorted(wheels.items()) if n.startswith('ros-')},
        'debian': debian,
        'python': f'{sys.version_info[0]}.{sys.version_info[1]}',
        'machine': os.uname().machine,
        'recipe': own,
    }
    blob = json.dumps(inputs, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16], inputs


def unpack(sources: Path, sums: dict, src: Path) -> None:
    """Check each archive against SHA256SUMS and unpack it under src/<archive name>/."""
    for name, digest in sorted(sums.items()):
        path = sources / name
        got = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        if got != digest:
            raise BuildError(f'{path}: SHA256 {got or "(missing)"} differs from SHA256SUMS'
                             f' {digest}')
        dest = src / name.split('.', 1)[0]
        dest.mkdir(parents=True)
        with tarfile.open(path) as tar:
            tar.extractall(dest, filter='data')
    log(f'sources: {len(sums)} archives match SHA256SUMS, unpacked')


def _link_tree(src: Path, dest: Path, keep: set) -> None:
    """Mirror src at dest with symlinks, descending only into directories holding a kept file."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        if entry in keep:
            continue
        on_path = any(k.is_relative_to(entry) for k in keep)
        if on_path and entry.is_dir() and not entry.is_symlink():
            _link_tree(entry, dest / entry.name, keep)
        else:
            (dest / entry.name).symlink_to(entry)


def shadow_prefix(venv: Path, shadow: Path) -> list:
    """Make the shadow prefix of the venv with FIXUPS applied to copies; return the fixed files."""
    fixed = {}
    for pattern, marker, fix in recipe.FIXUPS:
        hits = 0
        for path in sorted((venv / 'share').glob(pattern)):
            text = fixed.get(path, path.read_text(encoding='utf-8'))
            if marker in text:
                new = fix(text, venv)
                if marker in new:
                    raise BuildError(f'fix-up {fix.__name__} left {marker!r} in {path}')
                fixed[path] = new
                hits += 1
        log(f'fix-up {fix.__name__}: {hits} wheel CMake file(s) fixed in the shadow prefix'
            + ('' if hits else ' (none needed any more)'))
    _link_tree(venv, shadow, set(fixed))
    for path, text in fixed.items():
        (shadow / path.relative_to(venv)).write_text(text, encoding='utf-8')
    return sorted(fixed)


def colcon_build(venv: Path, shadow: Path, area: Path, shim: Path, jobs: int) -> None:
    """Run colcon over the unpacked sources; raise BuildError naming the failed package."""
    env = recipe.build_env(venv, shadow, area, jobs, dict(os.environ))
    colcon = str(venv / 'bin' / 'colcon')
    listed = subprocess.run([colcon, '--log-base', os.devnull, 'list', '--names-only',
                             '--base-paths', str(area / 'src')], env=env, check=True,
                            capture_output=True, text=True).stdout.split()
    absent = sorted(set(recipe.PACKAGES) - set(listed))
    if absent:
        raise BuildError(f'packages not found in the sources: {", ".join(absent)}')
    ignored = sorted(set(listed) - set(recipe.PACKAGES))
    log(f'colcon build of {len(recipe.PACKAGES)} packages (-j{jobs}): {" ".join(recipe.PACKAGES)}')
    log(f'not built ({len(ignored)}, --packages-ignore): {" ".join(ignored)}')
    cmd = [colcon, '--log-base', str(area / 'log'), *recipe.colcon_args(area, ignored, venv, shim),
           '--event-handlers', 'console_direct-', 'status-', 'desktop_notification-',
           'terminal_title-', 'console_start_end+', 'summary+']
    failed = []
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, cwd=area) as proc:
        try:
            for line in proc.stdout:
                print(f'  {line.rstrip()}', flush=True)
                m = re.match(r'Failed\s+<<<\s+(\S+)', line)
                if m:
                    failed.append(m.group(1))
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop colcon before cleaning up
            proc.terminate()
            proc.wait()
            raise
    if proc.returncode != 0:
        pkg = failed[0] if failed else None
        raise BuildError(
            f'colcon build failed in package {pkg or "(colcon itself)"} (exit {proc.returncode})',
            log=Path('latest_build') / pkg / 'stdout_stderr.log' if pkg else Path('latest_build'))


def finish(area: Path, inputs: dict, timings: dict) -> None:
    """Drop what the nodes do not need and write the build's record."""
    shutil.rmtree(area / 'build')
    shutil.rmtree(area / 'src')
    shutil.rmtree(area / 'colcon_home', ignore_errors=True)
    recipe.prune_install(area / rl_install.INSTALL)
    missing = [e for e in rl_install.EXECUTABLES
               if not os.access(rl_install.executable(e, root=area), os.X_OK)]
    if missing:
        raise BuildError(f'colcon succeeded but {", ".join(missing)} not installed')
    (area / 'BUILD_INFO.json').write_text(
        json.dumps({'inputs': inputs, 'packages': list(recipe.PACKAGES), 'seconds': timings},
                   indent=1))
    (area / rl_install.COMPLETE).write_text('')


def record(venv: Path, root: Path) -> None:
    """Record the build in the venv and write <venv>/vepd_rl_env.sh."""
    rl_install.pointer_path(venv).write_text(json.dumps({'root': str(root)}) + '\n')
    env_sh = venv / 'vepd_rl_env.sh'
    env_sh.write_text(rl_install.env_script(venv=venv, root=root))
    log(f'ready: {root}')
    log(f'environment: source {env_sh}   (or: eval "$({venv}/bin/python -m vepd_ros.rl_install)")')


def build(args) -> Path:
    """Build or reuse; return the complete build's root."""
    venv = Path(args.venv).absolute()
    sources = Path(args.sources).absolute()
    cache = Path(args.cache).absolute()
    t_all = time.monotonic()
    with step('checking the wheels (requirements-rl.txt)'):
        wheels = ensure_wheels(venv)
    debian = debian_versions()
    sums = read_sums(sources)
    sums_text = (sources / 'SHA256SUMS').read_text(encoding='utf-8')
    key, inputs = cache_key(sums_text, wheels, debian)
    root = cache / key
    log(f'cache key {key} (SHA256SUMS, {len(inputs["ros_wheels"])} ros-* wheel versions, Debian'
        f' {", ".join(f"{k} {v}" for k, v in debian.items())}, Python {inputs["python"]},'
        f' tools/rl_build)')
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / '.lock', 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f'waiting for another make rl building in {cache} (lock {cache / ".lock"}) ...')
            fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / rl_install.COMPLETE).is_file() and not args.force:
            log(f'reusing the complete build {root} (delete it or --force to rebuild)')
            record(venv, root)
            return root
        for stale in cache.glob(f'tmp-{key}-*'):
            shutil.rmtree(stale, ignore_errors=True)
        area = cache / f'tmp-{key}-{os.getpid()}'
        area.mkdir()
        timings = {}
        try:
            for name, fn in (
                ('unpacking the sources', lambda: unpack(sources, sums, area / 'src')),
                ('shadow prefix of the venv with the fix-ups',
                 lambda: shadow_prefix(venv, area / 'shadow')),
                ('colcon build',
                 lambda: colcon_build(venv, area / 'shadow', area,
                                      recipe.yaml_cpp_shim(area / 'cmake_shims'), args.jobs)),
                ('librcl copies without libpython entries',
                 lambda: [log(done) for done in
                          recipe.rcl_without_python(venv, area / rl_install.RCL_NOPY)]),
            ):
                t0 = time.monotonic()
                with step(name):
                    fn()
                timings[name] = round(time.monotonic() - t0, 1)
            shutil.rmtree(area / 'shadow')
            shutil.rmtree(area / 'cmake_shims')
            finish(area, inputs, timings)
            if root.exists():  # an incomplete entry (no COMPLETE) from an older layout, or --force
                shutil.rmtree(root)
            area.rename(root)
        except BaseException as exc:
            failed = cache / f'failed-{key}'
            shutil.rmtree(failed, ignore_errors=True)
            if (area / 'log').is_dir():
                (area / 'log').rename(failed)
            shutil.rmtree(area, ignore_errors=True)
            if isinstance(exc, BuildError) and exc.log is not None:
                raise BuildError(f'{exc}; log: {failed / exc.log}') from None
            if not isinstance(exc, BuildError):
                log(f'interrupted ({type(exc).__name__}): {area} removed, logs in {failed}')
            raise
        log(f'built in {time.monotonic() - t_all:.0f} s')
        record(venv, root)
        return root


def main() -> int:
    """Parse the options, build or reuse, exit 2 naming the failure."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', default=sys.prefix, help="the venv (default: this Python's)")
    parser.add_argument('--sources', default=str(REPO.parent / 'shared' / 'ros2_sources'))
    parser.add_argument('--cache', default=str(
        Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'vepd_ros' / 'rl'))
    parser.add_argument('--jobs', type=int, default=2, help='compile jobs (MAKEFLAGS -jN)')
    parser.add_argument('--force', action='store_true', help='rebuild even if the cache has it')
    args = parser.parse_args()
    # SIGTERM (a CI timeout, kill) cleans up like Ctrl-C: no temporary directory is left.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        build(args)
    except (BuildError, recipe.RecipeError) as exc:
        log(f'error: {exc}')
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())

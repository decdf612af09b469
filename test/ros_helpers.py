"""Test harness for rclpy over real DDS (loopback only).

- ``DomainLease``: a ROS_DOMAIN_ID held exclusively (flock) for one test, so concurrent pytest runs and
  xdist workers on this machine never see each other's traffic.
- ``spin_until``: spin executors until a predicate holds or a timeout passes (discovery can take
  seconds); never a fixed sleep.
- ``ros_env``: the environment for node subprocesses (same domain, loopback discovery, local logs).
"""
from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK_DIR = Path(os.environ.get('VEPD_DOMAIN_LOCK_DIR', '/tmp/vepd_ros_domain_locks'))
DOMAIN_RANGE = range(1, 233)   # 233+ fails in Fast DDS (port number too high)


class DomainLease:
    def __init__(self):
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        start = (os.getpid() * 7919 + int(time.monotonic_ns() % 1000)) % len(DOMAIN_RANGE)
        for k in range(len(DOMAIN_RANGE)):
            did = DOMAIN_RANGE[(start + k) % len(DOMAIN_RANGE)]
            fd = os.open(LOCK_DIR / f'{did}.lock', os.O_CREAT | os.O_RDWR, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.domain_id, self._fd = did, fd
            return
        raise RuntimeError('no free ROS_DOMAIN_ID between 1 and 232')

    def release(self):
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def ros_env(domain_id: int) -> dict:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOG_DIR=str(REPO / '.ros_log'), PYTHONUNBUFFERED='1')
    env.pop('RMW_IMPLEMENTATION', None)
    env.pop('ROS_LOCALHOST_ONLY', None)
    return env


def console_script(name: str) -> str:
    """Path of an installed console script in the running interpreter's environment."""
    path = Path(sys.prefix) / 'bin' / name
    if not path.exists():
        raise FileNotFoundError(f'{path} is missing: run `make venv` (pip install .) first')
    return str(path)


def spin_until(executor, predicate, timeout_s: float = 10.0, step_s: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=step_s)
    return bool(predicate())


def wait_for_output(proc, text: str, timeout_s: float = 10.0) -> str:
    """Read a subprocess's stdout (text mode) until a line containing ``text`` appears; returns what was read.
    Raises AssertionError with the output on timeout or early exit."""
    import selectors
    seen = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.1):
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
            if text in line:
                return ''.join(seen)
    finally:
        sel.close()
    raise AssertionError(f'{text!r} not seen within {timeout_s} s; output:\n' + ''.join(seen))

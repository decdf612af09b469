# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The DDS domain of a run: a ROS_DOMAIN_ID held exclusively on this machine (no ROS import).

DDS participants on the same domain see each other's topics: two ``vepd demo`` runs, a test run and
a robot on one machine (or one network) would read each other's ``/clock`` and ground truth.
``DomainLease`` takes a domain that no other vepd_ros process on this machine holds: one lock file
per domain in a machine-wide directory (``VEPD_DOMAIN_LOCK_DIR``, default
``/tmp/vepd_ros_domain_locks``), held with ``flock`` for as long as the lease (or the process)
lives, so a crashed holder frees its domain at once. Domains outside vepd_ros (a robot on domain 0,
a colleague's graph) are not locked here: the one-process runner also looks for participants on the
leased domain before it starts (``vepd_ros.nodes.guard``).

Used by ``vepd run`` / ``vepd demo`` (``choose_domain``: ``--domain-id``, else ROS_DOMAIN_ID,
else a lease; ``Domain``) and by the test harness (test/ros_helpers.py).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
import time

from vepd_ros.params import ParameterError

LOCK_DIR = Path(os.environ.get('VEPD_DOMAIN_LOCK_DIR', '/tmp/vepd_ros_domain_locks'))
DOMAIN_RANGE = range(1, 233)
"""Domains leased: 1-232. 0 is ROS's default (a robot's graph lives there); from 233 on Fast DDS's
port numbers (7400 + 250 * domain + offsets) pass 65535."""


class DomainLease:
    """
    ``DomainLease().domain_id``: a domain in ``DOMAIN_RANGE`` no other lease on this machine holds.

    ``avoid``: domains not to take even when free (e.g. one found busy by a discovery check).
    """

    def __init__(self, avoid=()):
        self._fd = None
        try:
            LOCK_DIR.mkdir(parents=True, exist_ok=True)
            os.chmod(LOCK_DIR, 0o1777)  # machine-wide: every user's processes lock here
        except PermissionError:
            pass  # someone else's directory, already world-writable
        start = (os.getpid() * 7919 + int(time.monotonic_ns() % 1000)) % len(DOMAIN_RANGE)
        for k in range(len(DOMAIN_RANGE)):
            did = DOMAIN_RANGE[(start + k) % len(DOMAIN_RANGE)]
            if did in avoid:
                continue
            try:
                fd = os.open(LOCK_DIR / f'{did}.lock', os.O_CREAT | os.O_RDWR, 0o666)
            except PermissionError:
                continue  # another user's lock file, not writable: theirs
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.domain_id, self._fd = did, fd
            return
        raise RuntimeError(
            f'no free ROS_DOMAIN_ID between {DOMAIN_RANGE.start} and {DOMAIN_RANGE.stop - 1} '
            f'(lock files in {LOCK_DIR})'
        )

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class Domain:
    """
    The DDS domain of one ``vepd run``: chosen by the user, or leased.

    The lease is a ``DomainLease``.
    """

    def __init__(self, domain_id: int, how: str, lease=None):
        self.domain_id, self.how, self.lease = domain_id, how, lease
        self.busy: list[int] = []  # leased domains left because others were on them

    def release(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def move(self) -> None:
        """Another participant was found on the leased domain: lease another, none left before."""
        self.busy.append(self.domain_id)
        self.release()
        self.lease = DomainLease(avoid=set(self.busy))
        self.domain_id = self.lease.domain_id
        self.how = (
            'a free domain leased on this machine; '
            f'{", ".join(map(str, self.busy))} had other participants'
        )


def choose_domain(explicit: int | None) -> Domain:
    """``--domain-id``, else ``ROS_DOMAIN_ID``, else a domain leased on this machine."""
    if explicit is not None:
        if not 0 <= explicit <= 232:
            raise ParameterError('--domain-id', explicit, 'a DDS domain between 0 and 232')
        return Domain(explicit, 'chosen with --domain-id')
    env = os.environ.get('ROS_DOMAIN_ID', '').strip()
    if env:
        if not env.isdigit() or int(env) > 232:
            raise ParameterError('ROS_DOMAIN_ID', env, 'a DDS domain between 0 and 232')
        return Domain(int(env), 'from ROS_DOMAIN_ID')
    lease = DomainLease()
    return Domain(
        lease.domain_id,
        'a free domain leased on this machine; set ROS_DOMAIN_ID or --domain-id to choose one',
        lease,
    )

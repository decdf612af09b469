# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Open ROS 1 and ROS 2 (sqlite3, mcap) bags with rosbags and stream selected topics in arrival order.

``Bag(path).messages(topics)`` yields ``(arrival_ns, topic, msgtype, msg)`` sorted by the
recorder's receive time (the order a node subscribed during recording saw them); ``msg`` is a
rosbags dataclass with the ROS field names. Only the selected topics are deserialised.

Types: a ROS 1 bag always carries full definitions and they are used alone. A ROS 2 bag's own
definitions (Iron+ sqlite3, all MCAP) win; anything missing comes from the ROS 2 Kilted typestore
plus the bundled sbg_driver / chrono_ros_interfaces ``.msg`` files (``vepd_ros.io.msgdefs``).

Every failure is a :class:`BagError` (a ``ValueError``) naming the file and, where it applies, the
topic and type: :class:`BagOpenError` (not a bag, truncated index/metadata, unsupported storage),
:class:`CorruptBagError` (a record or message that fails to read or decode, fewer messages than the
metadata promises), :class:`MissingTopicError`, :class:`UnknownTypeError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import functools
from pathlib import Path
from typing import Iterable, Iterator

from vepd_ros.io import cdr
from vepd_ros.streams import NS


class BagError(ValueError):
    """A bag could not be read as asked; the message names the file (and topic/type)."""

    def __init__(
        self, message: str, path=None, topic: str | None = None, msgtype: str | None = None
    ):
        super().__init__(message)
        self.path, self.topic, self.msgtype = path, topic, msgtype


class BagOpenError(BagError):
    """Not a readable bag: missing, truncated metadata/index, unknown storage."""


class CorruptBagError(BagError):
    """A record or a message in the bag cannot be read or decoded, or messages are missing."""


class MissingTopicError(BagError):
    """A requested topic is not in the bag."""


class UnknownTypeError(BagError):
    """
    A requested topic's message type has no definition.

    Not in the bag, the ROS 2 store or the bundled definitions.
    """


@dataclass
class TopicInfo:
    name: str
    msgtype: str
    count: int


@dataclass
class BagInfo:
    path: Path
    storage: str  # 'ros1', 'sqlite3' or 'mcap'
    start_ns: int
    end_ns: int
    topics: list[TopicInfo] = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) / NS

    def topic(self, name: str) -> TopicInfo | None:
        return next((t for t in self.topics if t.name == name), None)


def bag_format(path) -> str:
    """
    Tell a bag's storage format from its path.

    'ros1' for a ``.bag`` file, 'sqlite3' or 'mcap' for a ROS 2 bag directory or storage file.
    """
    p = Path(path)
    if p.is_file() and p.suffix == '.bag':
        return 'ros1'
    if p.is_file():
        if p.suffix == '.db3':
            return 'sqlite3'
        if p.suffix == '.mcap':
            return 'mcap'
        with open(p, 'rb') as f:
            head = f.read(16)
        if head.startswith(b'#ROSBAG V2.0'):
            return 'ros1'
        if head.startswith(b'\x89MCAP'):
            return 'mcap'
        if head.startswith(b'SQLite format 3'):
            return 'sqlite3'
        raise BagOpenError(
            f'{p}: not a ROS bag (expected a .bag file, a .db3/.mcap file or a rosbag2 '
            f'directory with metadata.yaml)',
            p,
        )
    if p.is_dir():
        meta = p / 'metadata.yaml'
        if meta.is_file():
            try:
                from vepd_ros.yamlio import load_yaml

                info = load_yaml(meta, what='rosbag2 metadata')['rosbag2_bagfile_information']
                return str(info.get('storage_identifier', 'sqlite3'))
            except Exception as exc:  # noqa: BLE001 - any damage to metadata is an open error
                raise BagOpenError(f'{meta}: unreadable rosbag2 metadata ({exc})', p) from None
        files = sorted(p.glob('*.mcap')) + sorted(p.glob('*.db3'))
        if files:
            return 'mcap' if files[0].suffix == '.mcap' else 'sqlite3'
        raise BagOpenError(f'{p}: directory without metadata.yaml, .db3 or .mcap files', p)
    raise BagOpenError(f'{p}: no such bag file or directory', p)


def _wrap(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f'{type(exc).__name__}: {text}' if type(exc).__name__ not in text else text


class Bag:
    """
    An open bag.

    Use as a context manager; ``messages()`` may be called more than once.
    """

    def __init__(self, path, *, extra_types: dict | None = None):
        self.path = Path(path)
        self.format = bag_format(self.path)
        self._extra = extra_types or {}
        self._reader = None
        self._typestores: dict = {}
        self._conns: dict[str, list] = {}

    # --- opening -------------------------------------------------------------------------------
    def open_reader(self) -> 'Bag':
        try:
            if self.format == 'ros1':
                from rosbags.rosbag1 import Reader

                reader = Reader(self.path)
            else:
                from rosbags.rosbag2 import Reader

                reader = Reader(self._ros2_path())
            reader.open()
        except BagError:
            raise
        except Exception as exc:  # noqa: BLE001 - rosbags/sqlite/mcap raise many kinds
            raise BagOpenError(
                f'{self.path}: cannot open {self.format} bag (truncated or corrupt?): '
                f'{_wrap(exc)}',
                self.path,
            ) from None
        self._reader = reader
        for c in reader.connections:
            self._conns.setdefault(c.topic, []).append(c)
        return self

    def _ros2_path(self) -> Path:
        p = self.path
        if p.is_file() and not (p.parent / 'metadata.yaml').is_file():
            return p  # rosbags opens a bare .mcap/.db3 file without metadata
        return p.parent if p.is_file() else p

    def close(self) -> None:
        if self._reader is not None:
            try:
                self._reader.close()
            finally:
                self._reader = None

    def __enter__(self) -> 'Bag':
        return self.open_reader() if self._reader is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- description ---------------------------------------------------------------------------
    def info(self) -> BagInfo:
        """File, format, first/last receive time and topics (name, type, message count)."""
        r = self._need_open()
        topics = []
        for topic, conns in sorted(self._conns.items()):
            types = {c.msgtype for c in conns}
            topics.append(
                TopicInfo(topic, '|'.join(sorted(types)), sum(int(c.msgcount or 0) for c in conns))
            )
        return BagInfo(
            self.path,
            self.format,
            int(r.start_time) if r.message_count else 0,
            int(r.end_time) if r.message_count else 0,
            topics,
        )

    def msgtype(self, topic: str) -> str:
        conns = self._connections_for(topic)
        types = {c.msgtype for c in conns}
        if len(types) != 1:
            raise CorruptBagError(
                f'{self.path}: topic {topic} is recorded with several types {sorted(types)}',
                self.path,
                topic,
            )
        return types.pop()

    def has_topic(self, topic: str) -> bool:
        self._need_open()
        return topic in self._conns

    def _need_open(self):
        if self._reader is None:
            raise BagError(
                f'{self.path}: bag is not open (use `with Bag(path) as bag:`)', self.path
            )
        return self._reader

    def _connections_for(self, topic: str):
        self._need_open()
        if topic not in self._conns:
            have = (
                ', '.join(f'{t} [{cs[0].msgtype}]' for t, cs in sorted(self._conns.items()))
                or 'none'
            )
            raise MissingTopicError(
                f'{self.path}: topic {topic} not in the bag (topics: {have})', self.path, topic
            )
        return self._conns[topic]

    # --- types -----------------------------------------------------------------------------------
    def typestore(self, topics: Iterable[str]):
        """
        Typestore that can decode ``topics``; raises UnknownTypeError naming file/topic/type.

        Only the types those topics need (their message types and what these contain) are
        generated; the store is kept for later calls with the same topics.
        """
        topics = tuple(dict.fromkeys(topics))
        ts = self._typestores.get(topics)
        if ts is None:
            ts = self._typestores[topics] = self._make_typestore(topics)
        return ts

    def _make_typestore(self, topics):
        from rosbags.interfaces import MessageDefinitionFormat
        from rosbags.typesys import (
            get_types_from_idl,
            get_types_from_msg,
            get_typestore,
            Stores,
            TypesysError,
        )

        conns = [c for t in topics for c in self._connections_for(t)]
        bag_types: dict = {}
        for c in conns:
            fmt = c.msgdef.format if c.msgdef is not None else MessageDefinitionFormat.NONE
            if fmt == MessageDefinitionFormat.NONE or not c.msgdef.data:
                continue
            try:
                if fmt == MessageDefinitionFormat.MSG:
                    new = get_types_from_msg(c.msgdef.data, c.msgtype)
                else:
                    sep = '=' * 80 + '\n'
                    new = {}
                    parts = (
                        c.msgdef.data.split(sep)[1:]
                        if c.msgdef.data.startswith(f'{sep}IDL: ')
                        else ['IDL: \n' + c.msgdef.data]
                    )
                    for part in parts:
                        new.update(get_types_from_idl(part.split('\n', 1)[1]))
            except Exception as exc:  # noqa: BLE001
                raise UnknownTypeError(
                    f'{self.path}: topic {c.topic}: cannot parse the definition of '
                    f'{c.msgtype} stored in the bag: {_wrap(exc)}',
                    self.path,
                    c.topic,
                    c.msgtype,
                ) from None
            bag_types.update(new)
        if self.format == 'ros1':
            ts = get_typestore(Stores.EMPTY)
            base: dict = {}
        else:
            from vepd_ros.io import msgdefs

            ts = get_typestore(Stores.EMPTY)
            base = dict(_ros2_fielddefs())
            try:
                bundled = msgdefs.bundled_types()
            except (
                FileNotFoundError
            ):  # an install without the bundled .msg files: bag definitions still work
                bundled = {}
            base.update({k: v for k, v in bundled.items() if k not in base})
        base.update({k: v for k, v in self._extra.items() if k not in bag_types})
        # the bag's own definitions win; the rest from the stock store, bundled and extra types —
        # only what the selected topics reach
        need = _type_closure([c.msgtype for c in conns], [bag_types, base])
        try:
            ts.register({k: v for k, v in bag_types.items() if k in need})
            ts.register({k: v for k, v in base.items() if k in need and k not in bag_types})
        except TypesysError as exc:
            raise UnknownTypeError(
                f'{self.path}: inconsistent message definitions: {exc}', self.path
            ) from None
        for c in conns:
            if c.msgtype not in ts.types:
                where = (
                    'the ROS 1 bag has no definition for it'
                    if self.format == 'ros1'
                    else 'the bag carries no definition and neither the ROS 2 typestore nor '
                         'vepd_ros.io.msgdefs has it'
                )
                raise UnknownTypeError(
                    f'{self.path}: topic {c.topic}: unknown message type {c.msgtype} ({where}); '
                    f'register its .msg text with Bag(..., extra_types=get_types_from_msg(text, '
                    f"'{c.msgtype}'))",
                    self.path,
                    c.topic,
                    c.msgtype,
                )
        return ts

    # --- reading -------------------------------------------------------------------------------
    def messages(
        self,
        topics: Iterable[str],
        *,
        start_ns: int | None = None,
        stop_ns: int | None = None,
        check_counts: bool = True,
        flat: Iterable[str] = (),
    ) -> Iterator[tuple[int, str, str, object]]:
        """
        Yield (arrival_ns, topic, msgtype, msg) for ``topics`` in arrival order.

        ``start_ns``/``stop_ns`` bound arrival time (absolute ns, stop exclusive). With no bounds
        the number read per topic is checked against the bag's index/metadata (a short read means a
        truncated bag). Topics in ``flat`` of a type in ``cdr.FLAT_TYPES`` yield, where the message
        allows it (ROS 2 little-endian CDR, the stock definition), the tuple of ``cdr.flat_imu`` /
        ``cdr.flat_navsatfix`` instead of a message object — the same numbers without building the
        object.
        """
        topics = list(dict.fromkeys(topics))
        ts = self.typestore(topics)
        conns = [c for t in topics for c in self._conns[t]]
        deser = ts.deserialize_ros1 if self.format == 'ros1' else ts.deserialize_cdr
        flat = set(flat) if self.format != 'ros1' else set()
        fast = {c.id: _flat_decoder(ts, c.msgtype) for c in conns if c.topic in flat}
        counts = dict.fromkeys(topics, 0)
        reader = self._reader
        it = reader.messages(connections=conns, start=start_ns, stop=stop_ns)
        last = None
        while True:
            try:
                item = next(it)
            except StopIteration:
                break
            except Exception as exc:  # noqa: BLE001 - sqlite/mcap/lz4/struct storage errors
                after = f' after t={last / NS:.3f} s' if last is not None else ''
                raise CorruptBagError(
                    f'{self.path}: cannot read record{after} (truncated or corrupt?): '
                    f'{_wrap(exc)}',
                    self.path,
                ) from None
            conn, t_ns, raw = item
            try:
                dec = fast.get(conn.id) if fast else None
                msg = dec(raw) if dec is not None else None
                if msg is None:
                    msg = deser(raw, conn.msgtype)
            except Exception as exc:  # noqa: BLE001
                raise CorruptBagError(
                    f'{self.path}: topic {conn.topic}: cannot decode a {conn.msgtype} message '
                    f'at t={t_ns / NS:.3f} s: {_wrap(exc)}',
                    self.path,
                    conn.topic,
                    conn.msgtype,
                ) from None
            last = t_ns
            counts[conn.topic] += 1
            yield t_ns, conn.topic, conn.msgtype, msg
        if check_counts and start_ns is None and stop_ns is None:
            for t in topics:
                expected = sum(int(c.msgcount or 0) for c in self._conns[t])
                if expected and counts[t] < expected:
                    raise CorruptBagError(
                        f'{self.path}: topic {t}: read {counts[t]} of the {expected} messages '
                        f'the bag index lists (truncated?)',
                        self.path,
                        t,
                    )


@functools.lru_cache(maxsize=1)
def _ros2_fielddefs() -> dict:
    """
    Return the field definitions of the stock ROS 2 (Kilted) typestore.

    Built once (~6 ms); callers must not mutate it.
    """
    from rosbags.typesys import get_typestore, Stores

    return get_typestore(Stores.ROS2_KILTED).fielddefs


def _nested_names(desc) -> list:
    from rosbags.interfaces import Nodetype

    kind, arg = desc
    if kind == Nodetype.NAME:
        return [arg]
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        return _nested_names(arg[0])
    return []


def _type_closure(roots, sources) -> set:
    """
    Return the names of ``roots`` and of every type their fields reach.

    Names of ``roots`` and every type their fields reach, each looked up in the first of
    ``sources`` (dicts of rosbags field definitions) that has it; unknown names are kept (reported
    later).
    """
    seen, todo = set(), list(roots)
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        for src in sources:
            if t in src:
                for _, desc in src[t][1]:
                    todo.extend(_nested_names(desc))
                break
    return seen


def flat_imu_from_message(m) -> tuple:
    """Flatten an Imu message object (rosbags or rclpy) to the layout of ``cdr.flat_imu``."""
    o, w, a = m.orientation, m.angular_velocity, m.linear_acceleration
    return (
        stamp_ns(m),
        m.header.frame_id,
        (
            o.x,
            o.y,
            o.z,
            o.w,
            *m.orientation_covariance,
            w.x,
            w.y,
            w.z,
            *m.angular_velocity_covariance,
            a.x,
            a.y,
            a.z,
            *m.linear_acceleration_covariance,
        ),
    )


def flat_navsatfix_from_message(m) -> tuple:
    """Flatten a NavSatFix message object to the layout of ``cdr.flat_navsatfix``."""
    return (
        stamp_ns(m),
        m.header.frame_id,
        m.status.status,
        m.status.service,
        m.latitude,
        m.longitude,
        m.altitude,
        tuple(m.position_covariance),
        m.position_covariance_type,
    )


def _flat_decoder(ts, msgtype: str):
    """
    Return the flat decoder of ``msgtype`` if the typestore's definition allows it, else None.

    The flat decoder of ``msgtype`` when the typestore defines it (and what it contains) exactly as
    the stock ROS 2 store does, else None.
    """
    f = cdr.FLAT.get(msgtype)
    if f is None:
        return None
    stock = _ros2_fielddefs()
    for t in _type_closure([msgtype], [stock]):
        mine, want = ts.fielddefs.get(t), stock.get(t)
        if (
            mine is None or want is None or mine[1] != want[1]
        ):  # fields only: constants (e.g. Humble's
            return None  # NavSatStatus) do not change the wire layout
    return f


def open_bag(path, **kw) -> Bag:
    """Open a bag, to use as a context manager (``with ... as bag:``)."""
    return Bag(path, **kw).open_reader()


def bag_info(path) -> BagInfo:
    with Bag(path) as bag:
        return bag.info()


def read_messages(path, topics: Iterable[str], **kw) -> list[tuple[int, object]]:
    """
    Read the messages of ``topics`` into a list.

    [(arrival_ns, msg)] of ``topics`` in arrival order (whole bag in memory; for small
    windows/logs).
    """
    return [(t, m) for t, _, _, m in iter_messages(path, topics, **kw)]


def iter_messages(path, topics: Iterable[str], **kw) -> Iterator[tuple[int, str, str, object]]:
    """
    Iterate over the messages of ``topics`` in a bag.

    Open ``path`` and yield (arrival_ns, topic, msgtype, msg) for ``topics`` in arrival order.
    """
    with Bag(path) as bag:
        yield from bag.messages(topics, **kw)


def stamp_ns(msg) -> int:
    """Header stamp of a message in integer ns."""
    s = msg.header.stamp
    return int(s.sec) * NS + int(s.nanosec)


def stamp_s(msg) -> float:
    """Header stamp of a message in seconds (float)."""
    s = msg.header.stamp
    return int(s.sec) + int(s.nanosec) * 1e-9

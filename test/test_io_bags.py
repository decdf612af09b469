# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Test vepd_ros.io.bags: ROS 1 and ROS 2 bag reading.

vepd_ros.io.bags: ROS 1 and ROS 2 (sqlite3, mcap) reading, arrival order, type resolution, clear
errors.
"""

from __future__ import annotations

import os
import shutil
import sqlite3

import numpy as np
import pytest
from vepd_ros.io import bags as B
from vepd_ros.io import calibration_logs
from vepd_ros.io import cdr
from vepd_ros.io.write_bag import write_bag
from vepd_ros.streams import (
    NS, TOPIC_ART_GPS_FIX, TOPIC_ART_IMU, TOPIC_GPS_FIX, TOPIC_IMU, TOPIC_INS_VELOCITY
)

T0 = 1_700_000_000_000_000_000


def _streams(n=600):
    tn = T0 + np.arange(n, dtype=np.int64) * 10_000_000
    rng = np.random.default_rng(1)
    return {
        'fix': {
            't_ns': tn[::10],
            'latitude': 43.07 + 1e-6 * np.arange(n // 10),
            'longitude': -89.4,
            'altitude': 260.0,
            'position_covariance': [1e-4, 1e-4, 4e-4],
            'status': 2,
        },
        'imu': {
            't_ns': tn,
            'angular_velocity': rng.normal(size=(n, 3)),
            'linear_acceleration': rng.normal(size=(n, 3)) + [0, 0, 9.8],
        },
        'gps_vel': {'t_ns': tn[::20], 'v_enu': np.tile([1.0, 2.0, -0.5], (n // 20, 1))},
    }


@pytest.fixture(params=['sqlite3', 'mcap'])
def art_bag(request, tmp_path):
    s = _streams()
    return write_bag(
        tmp_path / request.param, s, storage=request.param, latency_s={'imu': 0.002}
    ), s


def test_ros1_test1_bag_counts_order_and_fields(shared_data):
    path = shared_data / 'robot_localization_tests' / 'test1.bag'
    with B.Bag(path) as bag:
        info = bag.info()
        assert info.storage == 'ros1'
        assert {(t.name, t.msgtype, t.count) for t in info.topics} == {
            (TOPIC_ART_GPS_FIX, 'sensor_msgs/msg/NavSatFix', 989),
            (TOPIC_IMU, 'sensor_msgs/msg/Imu', 11865),
            ('/husky_velocity_controller/odom', 'nav_msgs/msg/Odometry', 3952),
        }
        arr, topics = [], set()
        for t_ns, topic, msgtype, msg in bag.messages([TOPIC_ART_GPS_FIX, TOPIC_IMU]):
            arr.append(t_ns)
            topics.add(topic)
        assert topics == {TOPIC_ART_GPS_FIX, TOPIC_IMU}  # only the selected topics
        assert len(arr) == 989 + 11865
        assert np.all(np.diff(arr) >= 0)  # arrival order across topics
        fix = next(m for _, t, _, m in bag.messages([TOPIC_ART_GPS_FIX]))
        assert abs(fix.latitude - 42.3758) < 1e-3 and fix.position_covariance[0] == pytest.approx(
            0.81
        )


@pytest.mark.parametrize('topic', [TOPIC_ART_GPS_FIX, TOPIC_IMU])
def test_calibration_window_with_no_message_names_topic_and_window(shared_data, topic):
    path = shared_data / 'robot_localization_tests' / 'test1.bag'
    empty = rf'{topic}: no messages in the window \[5000.0, 5001.0\]'
    with pytest.raises(B.BagError, match=empty):
        calibration_logs.read_window(path, topic, 5000.0, 5001.0)
    with pytest.raises(B.BagError, match='expected one of sensor_msgs/msg/NavSatFix'):
        calibration_logs.read_window(path, '/husky_velocity_controller/odom', 0.0, 1.0)


def test_calibration_windows_from_test1(shared_data):
    """A window holds the messages that arrived in it, under the stream schema's field names."""
    path = shared_data / 'robot_localization_tests' / 'test1.bag'
    start = B.bag_info(path).start_ns
    g = calibration_logs.read_window(path, TOPIC_ART_GPS_FIX, 0.0, 10.0)
    assert 20 <= len(g['stamp_ns']) <= 30  # 2.5 Hz for 10 s
    assert np.all(g['arrival_ns'] - start <= 10 * NS)
    cov = g['position_covariance']
    assert np.sqrt(0.5 * (cov[:, 0] + cov[:, 4])) == pytest.approx(0.9)  # sqrt(0.81)
    assert {'latitude', 'longitude', 'altitude', 'status'} <= set(g)
    i = calibration_logs.read_window(path, TOPIC_IMU, 0.0, 10.0)
    assert 290 <= len(i['stamp_ns']) <= 310
    accel = i['linear_acceleration']
    assert np.linalg.norm(accel, axis=1).mean() == pytest.approx(9.8, abs=0.2)  # sensor frame
    # the helpers the calibration module calls
    rows = B.read_messages(
        path,
        [TOPIC_ART_GPS_FIX],
        start_ns=B.bag_info(path).start_ns,
        stop_ns=B.bag_info(path).start_ns + NS,
    )
    assert rows and all(isinstance(B.stamp_s(m), float) for _, m in rows)


def test_ros2_roundtrip_fields_and_arrival(art_bag):
    path, s = art_bag
    with B.Bag(path) as bag:
        info = bag.info()
        assert info.topic(TOPIC_INS_VELOCITY).msgtype == 'sbg_driver/msg/SbgGpsVel'
        items = list(bag.messages([TOPIC_ART_IMU, TOPIC_INS_VELOCITY, TOPIC_ART_GPS_FIX]))
    assert len(items) == 600 + 30 + 60
    arr = [t for t, *_ in items]
    assert arr == sorted(arr)
    imu = [(t, m) for t, topic, _, m in items if topic == TOPIC_ART_IMU]
    assert imu[0][0] - B.stamp_ns(imu[0][1]) == 2_000_000  # 2 ms latency = arrival - stamp
    assert [B.stamp_ns(m) for _, m in imu] == list(s['imu']['t_ns'])
    got = np.array(
        [[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for _, m in imu]
    )
    assert np.array_equal(got, s['imu']['angular_velocity'])
    vel = [m for _, topic, _, m in items if topic == TOPIC_INS_VELOCITY][0]
    assert (vel.velocity.x, vel.velocity.y, vel.velocity.z) == (2.0, 1.0, 0.5)  # written in NED
    fix = [m for _, topic, _, m in items if topic == TOPIC_ART_GPS_FIX][0]
    assert fix.status.status == 2 and fix.position_covariance[8] == pytest.approx(4e-4)


def _drop_definitions(bag_dir):
    db = next(bag_dir.glob('*.db3'))
    con = sqlite3.connect(db)
    con.execute('DELETE FROM message_definitions')
    con.commit()
    con.close()


def test_sqlite3_bag_without_definitions_uses_bundled_sbg_types(tmp_path):
    """
    Decode Humble-era sqlite3 bags without definitions from the bundled .msg files.

    Humble-era sqlite3 bags (like ART's) carry no definitions: the bundled .msg files decode them.
    """
    path = write_bag(tmp_path / 'b', _streams(), storage='sqlite3')
    _drop_definitions(path)
    with B.Bag(path) as bag:
        assert all(not c.msgdef.data for c in bag._reader.connections)
        vel = [m for _, _, _, m in bag.messages([TOPIC_INS_VELOCITY])]
    assert len(vel) == 30 and vel[0].velocity.y == 1.0 and vel[0].status.vel_type == 2


def test_unknown_type_names_file_topic_and_type(tmp_path):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores

    ts = get_typestore(Stores.ROS2_KILTED)
    ts.register(get_types_from_msg('float64 value\nstring note', 'acme_msgs/msg/Thing'))
    path = tmp_path / 'acme'
    with Writer(path, version=9, storage_plugin=StoragePlugin.SQLITE3) as w:
        c = w.add_connection('/thing', 'acme_msgs/msg/Thing', typestore=ts)
        msg = ts.types['acme_msgs/msg/Thing'](value=1.5, note='x')
        w.write(c, T0, ts.serialize_cdr(msg, 'acme_msgs/msg/Thing'))
    with B.Bag(path) as bag:  # the bag's own definition decodes it
        assert [m.value for _, _, _, m in bag.messages(['/thing'])] == [1.5]
    _drop_definitions(path)
    with B.Bag(path) as bag, pytest.raises(B.UnknownTypeError) as ei:
        list(bag.messages(['/thing']))
    text = str(ei.value)
    assert str(path) in text and '/thing' in text and 'acme_msgs/msg/Thing' in text
    # a caller can supply the definition
    with B.Bag(
        path, extra_types=get_types_from_msg('float64 value\nstring note', 'acme_msgs/msg/Thing')
    ) as bag:
        assert [m.note for _, _, _, m in bag.messages(['/thing'])] == ['x']


def test_missing_topic_lists_what_is_there(art_bag):
    path, _ = art_bag
    with B.Bag(path) as bag, pytest.raises(B.MissingTopicError) as ei:
        list(bag.messages([TOPIC_GPS_FIX]))
    assert (
        str(path) in str(ei.value)
        and TOPIC_GPS_FIX in str(ei.value)
        and TOPIC_INS_VELOCITY in str(ei.value)
    )


def _copy(src, dst):
    shutil.copytree(src, dst) if src.is_dir() else shutil.copy(src, dst)
    return dst


@pytest.mark.parametrize('frac', [0.5, 0.98])
def test_truncated_ros2_bags_fail_naming_the_file(art_bag, tmp_path, frac):
    path, _ = art_bag
    bad = _copy(path, tmp_path / 'truncated')
    f = next(p for p in bad.iterdir() if p.suffix in ('.db3', '.mcap'))
    data = f.read_bytes()
    f.write_bytes(data[: int(len(data) * frac)])
    with pytest.raises(B.BagError) as ei:
        with B.Bag(bad) as bag:
            list(bag.messages([TOPIC_ART_IMU, TOPIC_ART_GPS_FIX]))
    assert str(bad) in str(ei.value)


def test_corrupted_records_fail_naming_the_file(art_bag, tmp_path):
    path, _ = art_bag
    bad = _copy(path, tmp_path / 'corrupt')
    f = next(p for p in bad.iterdir() if p.suffix in ('.db3', '.mcap'))
    data = bytearray(f.read_bytes())
    n = len(data)
    data[n // 3: n // 3 + 4000] = (
        np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes()
    )
    f.write_bytes(bytes(data))
    with pytest.raises(B.BagError) as ei:
        with B.Bag(bad) as bag:
            list(bag.messages([TOPIC_ART_IMU, TOPIC_ART_GPS_FIX, TOPIC_INS_VELOCITY]))
    assert str(bad) in str(ei.value)


def test_truncated_ros1_bag(shared_data, tmp_path):
    src = shared_data / 'robot_localization_tests' / 'test1.bag'
    bad = tmp_path / 'half.bag'
    bad.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    with pytest.raises(B.BagOpenError, match='half.bag'):
        B.Bag(bad).open_reader()


def test_not_a_bag(tmp_path):
    p = tmp_path / 'x.txt'
    p.write_text('hello')
    with pytest.raises(B.BagOpenError, match='not a ROS bag'):
        B.Bag(p)
    with pytest.raises(B.BagOpenError, match='no such bag'):
        B.Bag(tmp_path / 'missing.bag')
    d = tmp_path / 'empty_dir'
    os.mkdir(d)
    with pytest.raises(B.BagOpenError, match='metadata.yaml'):
        B.Bag(d)


def test_bare_mcap_file_opens(tmp_path):
    path = write_bag(tmp_path / 'm', _streams(), storage='mcap')
    f = next(path.glob('*.mcap'))
    bare = tmp_path / 'bare.mcap'
    shutil.copy(f, bare)
    with B.Bag(bare) as bag:
        assert bag.format == 'mcap'
        assert len(list(bag.messages([TOPIC_ART_GPS_FIX]))) == 60


def _imu_fix_msgs(ts, frame):
    """Build a rosbags Imu and NavSatFix with random values and the given frame_id."""
    rng = np.random.default_rng(len(frame))
    T = ts.types
    hdr = T['std_msgs/msg/Header'](
        T['builtin_interfaces/msg/Time'](1_700_000_123, 456_789_012), frame
    )
    v3 = lambda: T['geometry_msgs/msg/Vector3'](*rng.normal(size=3))  # noqa: E731
    imu = T['sensor_msgs/msg/Imu'](
        hdr,
        T['geometry_msgs/msg/Quaternion'](*rng.normal(size=4)),
        rng.normal(size=9),
        v3(),
        rng.normal(size=9),
        v3(),
        rng.normal(size=9),
    )
    fix = T['sensor_msgs/msg/NavSatFix'](
        hdr,
        T['sensor_msgs/msg/NavSatStatus'](int(rng.integers(-1, 3)), 13),
        *rng.normal(size=3),
        rng.normal(size=9),
        2,
    )
    return imu, fix


def _norm(v):
    """Flat tuples as comparable plain values: floats by their bits, ints, strings."""
    if isinstance(v, (tuple, list, np.ndarray)):
        return tuple(_norm(x) for x in v)
    if isinstance(v, (float, np.floating)):
        return ('f', np.float64(v).tobytes())
    return v


@pytest.mark.parametrize(
    'frame', ['', 'a', 'ab', 'imu', 'base_link', 'gps_antenna_frame_xyz', 'é1']
)
def test_flat_decoders_equal_the_typestore(frame):
    """
    Read the same numbers with the flat decoders as with rosbags' deserialiser.

    flat_imu / flat_navsatfix read the same numbers as rosbags' deserialiser at every string length
    (CDR alignment after frame_id) and with trailing padding; big-endian CDR and other sizes go
    back to the typestore (None).
    """
    from rosbags.typesys import get_typestore, Stores

    ts = get_typestore(Stores.ROS2_KILTED)
    imu, fix = _imu_fix_msgs(ts, frame)
    for msg, flat, obj in (
        (imu, cdr.flat_imu, B.flat_imu_from_message),
        (fix, cdr.flat_navsatfix, B.flat_navsatfix_from_message),
    ):
        raw = bytes(ts.serialize_cdr(msg, msg.__msgtype__))
        dec = ts.deserialize_cdr(raw, msg.__msgtype__)
        want = obj(dec)
        for r in (raw, raw + b'\0' * 3, memoryview(raw)):
            got = flat(r)
            assert got is not None and _norm(got) == _norm(want)
        assert flat(raw + b'\0' * 4) is None and flat(raw[:-8]) is None
        be = bytes(ts.serialize_cdr(msg, msg.__msgtype__, little_endian=False))
        assert flat(be) is None


def test_flat_reading_equals_message_objects(art_bag, monkeypatch):
    """
    Give the same arrays from read_bag_streams with flat decoders as with messages.

    read_bag_streams with the flat decoders gives the arrays the message objects give, bit for bit.
    """
    from vepd_ros.io.bagrun import read_bag_streams
    from vepd_ros.io.profiles import get_profile

    bag, _ = art_bag
    prof = get_profile('art')
    fast = read_bag_streams(bag, prof)
    monkeypatch.setattr(cdr, 'FLAT', {})  # no flat decoder: objects
    slow = read_bag_streams(bag, prof)
    for name in ('imu', 'gps'):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.keys() == b.keys()
        for k in a:
            if isinstance(a[k], np.ndarray):
                assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes(), (name, k)
            else:
                assert a[k] == b[k]
    assert fast.counts == slow.counts and fast.imu['stamp_ns'].size > 100


def test_typestore_has_only_what_the_topics_need_and_is_kept(art_bag):
    bag_path, _ = art_bag
    with B.Bag(bag_path) as bag:
        ts = bag.typestore([TOPIC_ART_GPS_FIX, TOPIC_ART_IMU])
        assert bag.typestore([TOPIC_ART_GPS_FIX, TOPIC_ART_IMU]) is ts
        assert {'sensor_msgs/msg/Imu', 'sensor_msgs/msg/NavSatFix', 'std_msgs/msg/Header'} <= set(
            ts.types
        )
        assert len(ts.types) < 15 and 'nav_msgs/msg/Odometry' not in ts.types
        topics = [TOPIC_ART_GPS_FIX, TOPIC_ART_IMU]
        msgs = [m for _, _, _, m in bag.messages(topics, flat=[TOPIC_ART_IMU])]
        assert (
            len(msgs) > 100
            and any(type(m) is tuple for m in msgs)
            and any(type(m) is not tuple for m in msgs)
        )


def test_no_flat_decoder_for_a_definition_that_is_not_the_stock_one():
    """
    Decode a bag that redefines sensor_msgs/Imu by its typestore.

    A bag that defines sensor_msgs/Imu (or a type inside it) differently is decoded by its
    typestore.
    """
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores

    stock = get_typestore(Stores.ROS2_KILTED)
    assert B._flat_decoder(stock, 'sensor_msgs/msg/Imu') is cdr.flat_imu
    assert B._flat_decoder(stock, 'sensor_msgs/msg/NavSatFix') is cdr.flat_navsatfix
    assert B._flat_decoder(stock, 'nav_msgs/msg/Odometry') is None
    for name, text in (
        ('sensor_msgs/msg/Imu', 'std_msgs/Header header\nfloat64 x\n'),
        ('std_msgs/msg/Header', 'builtin_interfaces/Time stamp\nstring frame_id\nuint32 seq\n'),
    ):
        ts = get_typestore(Stores.EMPTY)
        ts.register({k: v for k, v in stock.fielddefs.items() if k != name})
        ts.register(get_types_from_msg(text, name))
        assert B._flat_decoder(ts, 'sensor_msgs/msg/Imu') is None

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Read the GPS and IMU logs ``vepd calibrate`` fits noise models to (no ROS import).

``read_gps_log`` / ``read_imu_log`` turn an NMEA (pynmeagps, GGA), UBX (pyubx2: NAV-PVT/NAV-PVAT/
NAV-POSLLH + NAV-DOP), CSV-with-a-header or ROS bag log into the arrays of
``models.calibration.GpsLog`` / ``ImuLog`` that the fits take; ``read_window`` returns a time
window of a bag's NavSatFix or Imu topic as the stream schema's arrays (``io.bagrun``'s
converters).
Errors are ValueErrors naming the file (and line, column or topic).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
from vepd_ros.csvio import check_row_lengths, nonblank_rows, NUMBER_RE
from vepd_ros.frames import GRAVITY_MPS2
from vepd_ros.io import bagrun, bags
from vepd_ros.io.bags import Bag, BagError
from vepd_ros.models.calibration import GpsLog, ImuLog
from vepd_ros.streams import NS, TOPIC_ART_GPS_FIX, TOPIC_ART_IMU
from vepd_ros.yamlio import quote

BAG_SUFFIXES = ('.bag', '.db3', '.mcap')


def _kind(path: Path) -> str:
    if path.is_dir() or path.suffix in BAG_SUFFIXES:
        return 'bag'
    from vepd_ros.yamlio import read_input

    # a FIFO or device is refused here, before any read
    head = read_input(path, what='calibration log', max_bytes=4096, prefix=True)
    if path.suffix.lower() == '.csv':
        return 'csv'
    if b'\xb5b' in head:
        return 'ubx'
    if head.lstrip().startswith(b'$') or b'$GPGGA' in head or b'$GNGGA' in head:
        return 'nmea'
    return 'csv'


def read_gps_log(path, topic: str | None = None) -> GpsLog:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f'{path}: no such file')
    kind = _kind(path)
    if kind == 'nmea':
        return _read_nmea(path)
    if kind == 'ubx':
        return _read_ubx(path)
    if kind == 'bag':
        msgs = bags.read_messages(path, [topic or TOPIC_ART_GPS_FIX])
        rows = [
            (bags.stamp_s(m), m.latitude, m.longitude, m.altitude, m.status.status)
            for _, m in msgs
        ]
        if not rows:
            raise ValueError(f'{path}: no NavSatFix messages on {topic or TOPIC_ART_GPS_FIX}')
        a = np.array(rows, float)
        return _checked_gps(
            GpsLog(
                a[:, 0], a[:, 1], a[:, 2], a[:, 3], np.full(len(a), np.nan), a[:, 4], f'bag {path}'
            )
        )
    cols = _read_csv(path)
    t = _col(cols, path, 't', 'time', 'stamp', 't_s')
    log = GpsLog(
        t,
        _col(cols, path, 'lat', 'latitude'),
        _col(cols, path, 'lon', 'longitude'),
        _col(cols, path, 'alt', 'altitude', 'height'),
        _col(cols, path, 'hdop', default=np.full(len(t), np.nan)),
        _col(cols, path, 'status', 'quality', default=np.full(len(t), -1.0)),
        f'csv {path}',
    )
    return _checked_gps(log)


def _checked_gps(log: GpsLog) -> GpsLog:
    _check_time(log.t_s, log.source)
    _check_finite(log.source, latitude=log.lat, longitude=log.lon, altitude=log.alt)
    if not ((np.abs(log.lat) <= 90).all() and (np.abs(log.lon) <= 180).all()):
        raise ValueError(
            f'{log.source}: latitude/longitude out of range (expected degrees, '
            f'|lat| <= 90, '
            '|lon| <= 180)'
        )
    return log


def _read_nmea(path: Path) -> GpsLog:
    from pynmeagps import NMEAReader

    rows = []
    with open(path, 'rb') as fh:
        for _, msg in NMEAReader(fh, quitonerror=0):
            if msg is None or getattr(msg, 'msgID', '') != 'GGA' or msg.lat in ('', None):
                continue
            tm = msg.time
            t = tm.hour * 3600 + tm.minute * 60 + tm.second + tm.microsecond * 1e-6
            sep = msg.sep if isinstance(msg.sep, (int, float)) else 0.0
            hd = msg.HDOP if isinstance(msg.HDOP, (int, float)) else np.nan
            rows.append((t, msg.lat, msg.lon, msg.alt + sep, hd, msg.quality))
    if not rows:
        raise ValueError(f'{path}: no GGA sentences with a position')
    a = np.array(rows, float)
    a[:, 0] = np.unwrap(a[:, 0], period=86400.0)
    return _checked_gps(
        GpsLog(a[:, 0] - a[0, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5], f'nmea {path}')
    )


def _read_ubx(path: Path) -> GpsLog:
    from pyubx2 import UBXReader

    pos, dop = {}, {}
    with open(path, 'rb') as fh:
        for _, msg in UBXReader(fh, protfilter=2, quitonerror=0):
            if msg is None:
                continue
            ident = msg.identity
            if ident in ('NAV-PVT', 'NAV-PVAT', 'NAV-POSLLH') and isinstance(
                getattr(msg, 'iTOW', None), int
            ):
                q = getattr(msg, 'fixType', -1)
                if ident == 'NAV-PVT' and not getattr(msg, 'gnssFixOk', 1):
                    continue
                if ident == 'NAV-POSLLH' and msg.iTOW in pos:
                    continue
                pos[msg.iTOW] = (msg.lat, msg.lon, msg.height / 1000.0, q)
            elif ident == 'NAV-DOP' and isinstance(getattr(msg, 'iTOW', None), int):
                dop[msg.iTOW] = msg.hDOP
    if not pos:
        raise ValueError(f'{path}: no NAV-PVT/NAV-PVAT/NAV-POSLLH messages')
    keys = sorted(pos)
    t = np.array(keys, float) / 1000.0
    a = np.array([pos[k] for k in keys], float)
    hd = np.array([dop.get(k, np.nan) for k in keys], float)
    return _checked_gps(GpsLog(t - t[0], a[:, 0], a[:, 1], a[:, 2], hd, a[:, 3], f'ubx {path}'))


MAX_LOG_BYTES = 2 * 1024**3
"""Largest CSV log read (a day of 100 Hz IMU data is ~0.6 GB)."""


def _read_csv(path: Path) -> dict:
    """
    Read the columns of a CSV log with a header row.

    Columns of a CSV log with a header row; ValueError naming the file (and line, column) for
    binary content, a short file, ragged rows or a value that is not a number.
    """
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        raise ValueError(f'{path}: {size} bytes, more than the {MAX_LOG_BYTES} a CSV log may have')
    with open(path, 'rb') as fh:
        head = fh.read(8192)
    if b'\x00' in head:
        raise ValueError(f'{path}: binary content, expected a CSV log with a header row')
    try:
        with open(path, newline='', encoding='utf-8') as fh:
            rows, line_of = nonblank_rows(fh)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f'{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); expected '
            f'a CSV log '
            'with a header row'
        ) from None
    except csv.Error as exc:
        raise ValueError(f'{path}: not a readable CSV log ({str(exc)[:120]})') from None
    if len(rows) < 2:
        raise ValueError(f'{path}: expected a header row and data rows')
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise ValueError(f'{path}: duplicate column names in the header {quote(header)}')
    check_row_lengths(path, rows, line_of)
    data = np.empty((len(rows) - 1, len(header)))
    for n, r in enumerate(rows[1:]):
        for i, x in enumerate(r):
            try:
                # a plain decimal number (runs.format's rule): float() reads '1_0' as 10
                if not NUMBER_RE.fullmatch(x.strip()):
                    raise ValueError(x)
                data[n, i] = float(x)
            except ValueError:
                raise ValueError(
                    f'{path}, line {line_of[n + 1]}, column {quote(header[i])}: '
                    f'{quote(x)} '
                    f'is not a '
                    'number'
                ) from None
    return {h: data[:, i] for i, h in enumerate(header)}


def _check_time(t, source: str, what: str = 'time column') -> np.ndarray:
    """
    Check a time column and return it.

    Times must be finite and non-decreasing with a positive typical step (the rate is 1/median
    step).
    """
    t = np.asarray(t, float)
    if t.size < 2:
        raise ValueError(f'{source}: {t.size} sample(s); a log needs many')
    if not np.isfinite(t).all():
        raise ValueError(
            f'{source}: the {what} has non-finite values (first at row '
            f'{int(np.argmin(np.isfinite(t)))})'
        )
    d = np.diff(t)
    if (d < 0).any():
        raise ValueError(
            f'{source}: the {what} goes backwards at row {int(np.argmax(d < 0)) + 1} '
            '(expected increasing times)'
        )
    if not np.median(d) > 0:
        raise ValueError(
            f'{source}: the {what} is constant or mostly repeated (median step '
            f'{float(np.median(d)):g} s); expected increasing times in seconds'
        )
    return t


def _check_finite(source: str, **cols) -> None:
    for name, v in cols.items():
        bad = ~np.isfinite(np.asarray(v, float))
        if bad.any():
            raise ValueError(
                f'{source}: {name} has non-finite values (first at row '
                f'{int(np.argmax(bad.reshape(len(bad), -1).any(axis=1)))})'
            )


def _col(cols: dict, path, *names, default=None):
    low = {k.lower(): v for k, v in cols.items()}
    for n in names:
        if n in low:
            return low[n]
    for k, v in low.items():
        if any(k.startswith(n + ' ') or k.startswith(n + '(') for n in names):
            return v
    if default is not None:
        return default
    raise ValueError(f'{path}: no column named {" or ".join(names)} (have: {", ".join(cols)})')


def read_imu_log(path, topic: str | None = None) -> ImuLog:
    """
    Read an IMU log from a CSV file or a bag's sensor_msgs/Imu topic.

    IMU CSV (SI columns t, wx, wy, wz, ax, ay, az — our imu.csv — or x-io style 'Gyroscope X
    (deg/s)', 'Accelerometer X (g)') or a bag's sensor_msgs/Imu topic.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f'{path}: no such file')
    if _kind(path) == 'bag':
        msgs = bags.read_messages(path, [topic or TOPIC_ART_IMU])
        rows = [
            (
                bags.stamp_s(m),
                m.angular_velocity.x,
                m.angular_velocity.y,
                m.angular_velocity.z,
                m.linear_acceleration.x,
                m.linear_acceleration.y,
                m.linear_acceleration.z,
            )
            for _, m in msgs
        ]
        if not rows:
            raise ValueError(f'{path}: no Imu messages on {topic or TOPIC_ART_IMU}')
        a = np.array(rows, float)
        return _checked_imu(ImuLog(a[:, 0] - a[0, 0], a[:, 1:4], a[:, 4:7], f'bag {path}'))
    cols = _read_csv(path)
    low = {k.lower(): k for k in cols}
    t = _col(cols, path, 't', 'time', 'stamp')
    if all(k in low for k in ('wx', 'wy', 'wz', 'ax', 'ay', 'az')):
        g = np.column_stack([cols[low[k]] for k in ('wx', 'wy', 'wz')])
        a = np.column_stack([cols[low[k]] for k in ('ax', 'ay', 'az')])
    else:

        def find(prefix, axis):
            for k in cols:
                kl = k.lower()
                if kl.startswith(prefix) and f' {axis} ' in kl + ' ':
                    return k
            raise ValueError(
                f"{path}: no column '{prefix} {axis} (unit)' (have: {', '.join(cols)})"
            )

        g_cols = [find('gyroscope', ax) for ax in ('x', 'y', 'z')]
        a_cols = [find('accelerometer', ax) for ax in ('x', 'y', 'z')]
        g = np.column_stack([cols[c] for c in g_cols]) * (
            math.pi / 180.0 if 'deg' in g_cols[0].lower() else 1.0
        )
        a_scale = GRAVITY_MPS2 if '(g)' in a_cols[0].lower() else 1.0
        a = np.column_stack([cols[c] for c in a_cols]) * a_scale
    return _checked_imu(ImuLog(t - t[0], g, a, f'csv {path}'))


def _checked_imu(log: ImuLog) -> ImuLog:
    _check_time(log.t_s, log.source)
    _check_finite(log.source, angular_velocity=log.gyro, linear_acceleration=log.acc)
    return log


# --- windows of a bag as arrays (vepd calibrate --bag) ------------------------------------------
def _window(bag: Bag, t0, t1, time_base: str) -> tuple:
    """Return the absolute arrival-ns bounds of [t0, t1] s from the bag start ('bag') or epoch."""
    if time_base not in ('bag', 'absolute'):
        raise ValueError(f"time_base must be 'bag' or 'absolute', got {time_base!r}")
    off = bag.info().start_ns if time_base == 'bag' else 0
    start = None if t0 is None else off + int(round(float(t0) * NS))
    stop = None if t1 is None else off + int(round(float(t1) * NS)) + 1
    return start, stop


_WINDOW_ARRAYS = {
    'sensor_msgs/msg/NavSatFix': bagrun.fix_arrays,
    'sensor_msgs/msg/Imu': bagrun.imu_arrays,
}


def read_window(
    path, topic: str, t0: float | None = None, t1: float | None = None, *, time_base: str = 'bag'
) -> dict:
    """
    Read the NavSatFix or Imu messages of ``topic`` arriving in [t0, t1] s as arrays.

    Times count from the bag's start (``time_base='bag'``) or the epoch (``'absolute'``). The
    arrays are ``io.bagrun``'s, under the stream schema's names (``streams.STREAM_KINDS``: a fix's
    latitude, longitude, altitude, position_covariance, status; an IMU's angular_velocity,
    linear_acceleration, orientation and their covariances, as recorded) plus stamp_ns and
    arrival_ns (absolute ns) and frame_id. A topic of another type, or a window without messages,
    is a BagError naming the topic.
    """
    with Bag(path) as bag:
        msgtype = bag.msgtype(topic)
        convert = _WINDOW_ARRAYS.get(msgtype)
        if convert is None:
            raise BagError(
                f'{path}: topic {topic} is {msgtype}, expected one of {", ".join(_WINDOW_ARRAYS)}',
                path,
                topic,
                msgtype,
            )
        start, stop = _window(bag, t0, t1, time_base)
        messages = bag.messages([topic], start_ns=start, stop_ns=stop, flat=[topic])
        items = [(t_ns, m) for t_ns, _, _, m in messages]
    if not items:
        raise BagError(
            f'{path}: topic {topic}: no messages in the window [{t0}, {t1}] s ({time_base} time)',
            path,
            topic,
        )
    return convert(items)

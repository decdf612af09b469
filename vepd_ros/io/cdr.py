# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Decode the high-rate sensor messages from their CDR bytes without the typestore (no ROS import).

``flat_imu`` / ``flat_navsatfix`` read a little-endian CDR ``sensor_msgs/Imu`` / ``NavSatFix``
(the stock ROS 2 layout) straight into a tuple of numbers, or return None when the bytes have
another layout (the caller then deserialises with rosbags). ``FLAT`` maps each type to its
decoder; ``vepd_ros.io.bags`` decides per connection whether the bag's definition allows it.
"""

from __future__ import annotations

import struct

from vepd_ros.streams import NS

_IMU_DOUBLES = 4 + 9 + 3 + 9 + 3 + 9  # orientation, its covariance, ω, cov, a, cov
_STAMP_LEN = struct.Struct('<iII')  # header.stamp sec, nanosec; frame_id length
_IMU_VALUES = struct.Struct(f'<{_IMU_DOUBLES}d')
_FIX_STATUS = struct.Struct('<b')
_FIX_SERVICE = struct.Struct('<H')
_FIX_VALUES = struct.Struct('<12dB')  # latitude, longitude, altitude, covariance, its type
FLAT_TYPES = ('sensor_msgs/msg/Imu', 'sensor_msgs/msg/NavSatFix')


def flat_imu(raw):
    """
    Decode a little-endian CDR sensor_msgs/Imu without the typestore.

    A sensor_msgs/Imu in little-endian CDR as (stamp_ns, frame_id, 37 floats: orientation x y z w,
    its covariance, angular_velocity, its covariance, linear_acceleration, its covariance); None if
    the bytes do not have exactly that layout (the caller then uses the typestore). Offsets count
    from the CDR body (after the 4-byte encapsulation header), where CDR aligns each value to its
    size.
    """
    n = len(raw)
    if n < 16 or raw[0] != 0 or raw[1] != 1:  # little-endian plain CDR only
        return None
    sec, nsec, ln = _STAMP_LEN.unpack_from(raw, 4)  # header.stamp, frame_id length (with its NUL)
    o = (12 + ln + 7) & ~7  # doubles start 8-aligned after frame_id
    end = 4 + o + 8 * _IMU_DOUBLES
    if ln < 1 or not end <= n <= end + 3:  # up to 3 bytes of padding, as rosbags accepts
        return None
    return sec * NS + nsec, bytes(raw[16: 15 + ln]).decode(), _IMU_VALUES.unpack_from(raw, 4 + o)


def flat_navsatfix(raw):
    """
    Decode a little-endian CDR sensor_msgs/NavSatFix without the typestore.

    A sensor_msgs/NavSatFix in little-endian CDR as (stamp_ns, frame_id, status, service, latitude,
    longitude, altitude, covariance 9 floats, covariance type); None if the layout differs.
    """
    n = len(raw)
    if n < 16 or raw[0] != 0 or raw[1] != 1:
        return None
    sec, nsec, ln = _STAMP_LEN.unpack_from(raw, 4)
    o = 12 + ln  # status.status (int8)
    o2 = (o + 1 + 1) & ~1  # status.service (uint16)
    o3 = (o2 + 2 + 7) & ~7  # latitude ... (float64), then the uint8 type
    end = 4 + o3 + 8 * 12 + 1
    if ln < 1 or not end <= n <= end + 3:
        return None
    v = _FIX_VALUES.unpack_from(raw, 4 + o3)
    return (
        sec * NS + nsec,
        bytes(raw[16: 15 + ln]).decode(),
        _FIX_STATUS.unpack_from(raw, 4 + o)[0],
        _FIX_SERVICE.unpack_from(raw, 4 + o2)[0],
        v[0],
        v[1],
        v[2],
        v[3:12],
        v[12],
    )


FLAT = {'sensor_msgs/msg/Imu': flat_imu, 'sensor_msgs/msg/NavSatFix': flat_navsatfix}
"""The flat decoder of each message type that has one."""

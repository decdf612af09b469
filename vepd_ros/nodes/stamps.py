# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Message stamps and integer nanoseconds, both ways (``builtin_interfaces/Time``)."""

from vepd_ros.streams import NS


def stamp_to_ns(stamp) -> int:
    return int(stamp.sec) * NS + int(stamp.nanosec)


def ns_to_stamp(t_ns: int):
    from builtin_interfaces.msg import Time

    return Time(sec=int(t_ns // NS), nanosec=int(t_ns % NS))

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Message definitions the stock ROS 2 typestore lacks: sbg_driver and chrono_ros_interfaces.

The ``.msg`` files beside this module were written from the field lists of the drivers ART pinned
(SBG-Systems/sbg_ros2_driver ``aa63b9a``, projectchrono/chrono_ros_interfaces ``b9586a8``). ROS 2
bags recorded on Iron or later, and every MCAP bag, carry their own definitions;
``vepd_ros.io.bags`` prefers those, so these files only matter for bags without them (Humble
sqlite3, like ART's). Nested names inside a package (``SbgEkfStatus status``) resolve against the
message's own package.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

MSG_ROOT = Path(__file__).resolve().parent
PACKAGES = ('sbg_driver', 'chrono_ros_interfaces')


@lru_cache(maxsize=1)
def msg_texts() -> dict[str, str]:
    """{'pkg/msg/Name': msg text} for every bundled definition."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((MSG_ROOT / pkg).glob('*.msg')):
            out[f'{pkg}/msg/{path.stem}'] = path.read_text(encoding='utf-8')
    if not out:
        raise FileNotFoundError(
            f'no bundled .msg files under {MSG_ROOT} (is vepd_ros/io/msgdefs/**/*.msg in '
            f'package_data?)'
        )
    return out


@lru_cache(maxsize=1)
def bundled_types() -> dict:
    """Parse all bundled definitions into one rosbags type dict."""
    from rosbags.typesys import get_types_from_msg

    types: dict = {}
    for name, text in msg_texts().items():
        types.update(get_types_from_msg(text, name))
    return types


def register(typestore) -> None:
    """Add the bundled types that ``typestore`` does not have yet (never replaces a definition)."""
    typestore.register({k: v for k, v in bundled_types().items() if k not in typestore.fielddefs})


def ros2_typestore():
    """
    Build a fresh ROS 2 (Kilted) typestore with the bundled types registered.

    The bundled types are the sbg_driver/chrono_ros_interfaces ones.
    """
    from rosbags.typesys import get_typestore, Stores

    ts = get_typestore(Stores.ROS2_KILTED)
    register(ts)
    return ts

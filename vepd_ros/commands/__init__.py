# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Subcommands of ``vepd``; each module defines ``register(subparsers)``.

See ``vepd_ros.cli``.
"""

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Orchestration: the cores (truth, models, io, judge, runs, metrics) put together for a command.

``judge_step`` is the one judge call of every pipeline (``study``, ``bag``, ``replay``). Modules
here import the cores; no core imports them.
"""

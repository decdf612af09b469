# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The runners of ``vepd run``: a graph of ``vepd_ros.ros_graph`` run over DDS without launch_ros.

``domain``: the DDS domain a run takes (a lease on this machine, or the user's); ``monitor``: what
watches a running graph (progress, stall and wall limits, strangers on its topics) and whether its
result is complete; ``runner``: the graph's nodes in one process (in lockstep) or one process per
node, until the evaluator's result.
"""

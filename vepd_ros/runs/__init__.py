# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Run records: format, batches and the recorder core.

Run records: the on-disk format (paper CSV + JSON sidecar), batch folders and their index, and
the recorder core that segments paired estimate/truth streams into runs (design.md §5). Atomic
writes and ``load_json`` are the leaf ``vepd_ros.fileio``'s.
"""

from vepd_ros.runs.format import (
    EXTRA_COLUMNS,
    PAPER_COLUMNS,
    read_run,
    RunFileError,
    write_run,
)
from vepd_ros.runs.layout import (
    AUTHORS_MODELS,
    BatchDir,
    BatchWriter,
    display_name,
    Layout,
    OUR_MODELS,
    scan_root,
)
from vepd_ros.runs.recorder import RecorderCore

__all__ = [
    'EXTRA_COLUMNS',
    'PAPER_COLUMNS',
    'RunFileError',
    'read_run',
    'write_run',
    'AUTHORS_MODELS',
    'OUR_MODELS',
    'BatchDir',
    'BatchWriter',
    'Layout',
    'display_name',
    'scan_root',
    'RecorderCore',
]

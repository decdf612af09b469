# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
`make venv` puts every node executable where the ament prefix expects it.

That is <prefix>/lib/vepd_ros/, where `ros2 run vepd_ros <exe>` and launch_ros's Node look for
executables (colcon installs them there through setup.cfg); pip alone puts console scripts only in
<prefix>/bin.
"""

import ast
import os
from pathlib import Path
import subprocess

REPO = Path(__file__).resolve().parents[1]


def setup_py_nodes():
    """setup.py's NODES: the one list of node executables."""
    tree = ast.parse((REPO / 'setup.py').read_text())
    nodes = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and getattr(n.targets[0], 'id', '') == 'NODES'
    )
    return [ast.literal_eval(e) for e in nodes.value.elts]


def ament_lib():
    """<first ament prefix>/lib/vepd_ros (the venv under make and test/conftest.py)."""
    return Path(os.environ['AMENT_PREFIX_PATH'].split(os.pathsep)[0]) / 'lib' / 'vepd_ros'


def test_every_node_is_an_executable_in_the_ament_prefix():
    lib = ament_lib()
    assert lib.is_dir(), f'{lib} missing: run make venv'
    expected = setup_py_nodes() + ['vepd']
    for exe in expected:
        path = lib / exe
        assert path.is_file() and os.access(path, os.X_OK), f'{path} is not an executable file'
    # nothing else: a node removed from setup.py leaves no stale executable behind
    assert sorted(p.name for p in lib.iterdir()) == sorted(expected)


def test_the_executable_in_the_prefix_runs_the_installed_package():
    out = subprocess.run(
        [str(ament_lib() / 'vepd'), '--help'], capture_output=True, text=True, timeout=60, cwd='/'
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith('usage: vepd')

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The one reader of a node's section in a ROS 2 parameters file, and its writer (no ROS import).

A ROS 2 params file maps node names (optionally nested in namespaces, ``/ns/node`` or
``ns: {node: ...}``) to ``{ros__parameters: {...}}``; a ``/**`` section applies to every node
and the node's own entries override it (rcl's ``--params-file`` rules). ``node_section`` returns
the merged parameters of one node; a document with no ``ros__parameters`` anywhere is taken as a
flat mapping of parameter names. Used by the ekf, navsat_transform and bicycle readers of the
judge, by ``ros_graph`` for the parameters it gives the graph's nodes and by ``vepd sensors`` for
the noise nodes' files. ``config_file(name)`` finds the files the package ships (``config/``:
ekf.yaml, navsat.yaml, sensors.yaml) in the ament index, the venv or the checkout. It sits below
every layer (params, yamlio, fileio only), so io, judge, pipelines and ros_graph alike import it.
``node_params_yaml`` and ``write_params_file`` write such a file (``vepd calibrate``, ``vepd
tune``, ``vepd sensors``) for the noise nodes to read back through ``node_section``.
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
from typing import Any, Mapping

from vepd_ros.params import ParameterError
from vepd_ros.yamlio import load_yaml, parse_yaml

WILDCARD = '/**'
PACKAGE = 'vepd_ros'
"""The ROS package name (its share directory, its nodes' package)."""


def share_dir() -> Path:
    """
    Return share/vepd_ros: the ament index when available, else the source tree.

    The source tree is used for an uninstalled checkout.
    """
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except Exception:  # noqa: BLE001 - no index (AMENT_PREFIX_PATH unset) or package not installed
        for cand in (Path(sys.prefix) / 'share' / PACKAGE, Path(__file__).resolve().parents[1]):
            if (cand / 'config').is_dir():
                return cand
        return Path(__file__).resolve().parents[1]


def package_executable(package: str, executable: str) -> Path:
    """
    Return the path of ``package``'s ``executable`` as ``ros2 run`` finds it.

    <prefix of package on the ament index>/lib/<package>/<executable>. Raises ``LookupError``
    naming what is missing: the package not on AMENT_PREFIX_PATH, or no executable there.
    """
    from ament_index_python.packages import get_package_prefix, PackageNotFoundError

    try:
        path = Path(get_package_prefix(package)) / 'lib' / package / executable
    except PackageNotFoundError:
        raise LookupError(f'{package} is not installed (not on AMENT_PREFIX_PATH)') from None
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise LookupError(f'no executable {executable} of {package} at {path}')
    return path


def config_file(name: str) -> Path:
    """share/vepd_ros/config/<name>: the ament index, the venv prefix, or the source checkout."""
    path = share_dir() / 'config' / name
    if not path.is_file():
        raise FileNotFoundError(f'{name}: not found at {path} (pass the YAML path explicitly)')
    return path


def read_document(source, what: str = 'ROS 2 parameters') -> Mapping:
    """
    Return the parsed YAML document of ``source``: a mapping, a file path or YAML text.

    A string with a newline is YAML text; any other string or a Path is a file (read through
    ``yamlio.load_yaml``, whose errors name the file and line). A mapping is returned as given.
    """
    if isinstance(source, Mapping):
        return source
    if isinstance(source, Path) or '\n' not in str(source):
        return load_yaml(source, what=what)
    return parse_yaml(str(source), where=f'<{what} text>', what=what)


def sections(
    doc: Mapping, where: str = 'the parameters'
) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """
    Return the ``/**`` parameters (None if absent) and every node's, by full name.

    Full names are ``/ns/node`` as nested in the document (``/node`` at the top level). A
    ``ros__parameters`` that is not a mapping raises ParameterError naming its section and
    ``where`` the document came from.
    """
    found: dict[str, dict[str, Any]] = {}

    def walk(d, prefix):
        if not isinstance(d, Mapping):
            return
        for k, v in d.items():
            if k == 'ros__parameters':
                if not isinstance(v, Mapping):
                    raise ParameterError(
                        f'{prefix}/ros__parameters', v, f'a mapping of parameters (in {where})'
                    )
                found[prefix or '/'] = dict(v)
            elif isinstance(v, Mapping):
                walk(v, f'{prefix}/{str(k).lstrip("/")}' if k != WILDCARD else WILDCARD)

    walk(doc, '')
    wildcard = found.pop(WILDCARD, None)
    return wildcard, found


def node_section(
    source,
    node_name: str | None = None,
    *,
    what: str = 'ROS 2 parameters',
    default_names: tuple[str, ...] = (),
    required: bool = True,
) -> dict[str, Any]:
    """
    Return the parameters ``source`` gives ``node_name``: ``/**`` merged with the node's own.

    ``node_name`` matches a section's full name (``/ns/node``, leading ``/`` optional) or its last
    component. Without ``node_name``: the only node section, else the one whose last component is
    the first of ``default_names`` present, else (none but ``/**``) the ``/**`` parameters. A
    document with no ``ros__parameters`` at all is a flat mapping of parameters and is returned as
    it is. A node that is not in the file gets the ``/**`` parameters; with neither, a
    ParameterError names the nodes the file has (or ``{}`` when ``required`` is false).
    """
    doc = read_document(source, what)
    if isinstance(source, Mapping):
        where = 'the parameters'
    else:
        where = f'the {what} text' if '\n' in str(source) else f'the file {source}'
    wildcard, found = sections(doc, where)
    if wildcard is None and not found:  # a flat mapping of parameters
        return dict(doc)
    merged = dict(wildcard or {})
    names = sorted(found)
    if node_name is None:
        if not names:
            return merged
        chosen = names[0] if len(names) == 1 else None
        for default in default_names if chosen is None else ():
            hits = [n for n in names if n.rsplit('/', 1)[-1] == default]
            if len(hits) == 1:
                chosen = hits[0]
                break
        if chosen is None:
            raise ParameterError(
                'node_name', None, f'one of the nodes in {where}: ' + ', '.join(names)
            )
    else:
        want = node_name.lstrip('/')
        matches = [n for n in found if n.lstrip('/') == want or n.rsplit('/', 1)[-1] == want]
        if not matches:
            if wildcard is not None or not required:
                return merged
            raise ParameterError(
                'node_name', node_name, f'a node in {where}: ' + ', '.join(names)
            )
        chosen = matches[0]
    merged.update(found[chosen])
    return merged


def node_params_yaml(node: str, model: str, params: dict) -> str:
    """
    Return a ROS 2 parameters file for ``node`` as YAML text.

    A ROS 2 parameters file for ``node`` (what the noise nodes and ``vepd sensors simulate`` read).
    """
    import numpy as np
    import yaml

    clean = {'model': model}
    for k, v in params.items():
        if v is None:
            continue
        clean[k] = (
            [float(x) for x in v]
            if isinstance(v, (list, tuple))
            else (float(v) if isinstance(v, (float, np.floating)) else v)
        )
    return yaml.safe_dump({node: {'ros__parameters': clean}}, sort_keys=False)


def write_params_file(path, header: str, text: str) -> None:
    """
    Write a parameters YAML (``header + text``) to the file ``path``, whole or not at all.

    The file named by ``--out`` is replaced; a directory is refused with an error naming it.
    """
    from vepd_ros.fileio import atomic_write_text

    if Path(path).is_dir():
        raise ValueError(f'--out {path}: a directory; expected the YAML file name')
    atomic_write_text(path, header + text)

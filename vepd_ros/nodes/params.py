# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
A node's parameters: ``Param`` specs declared on an rclpy node, checked, and listed by ``--help``.

``vepd_ros.params`` declares each parameter once (name, default, check, description); this module
puts those specs on a node (``declare_params``; a noise node's model parameters: ``node_spec``),
refuses a parameter nobody declares, parses the judge nodes' ``static_transforms``, and writes the
text ``<node> --help`` prints (``node_help``).
"""

from __future__ import annotations

from typing import Iterable

from rclpy.node import Node
from vepd_ros.params import Param, ParameterError
from vepd_ros.streams import TOPIC_RUN_EVENTS


def node_spec(node: Node, kind: str, p: dict):
    """
    Declare a noise node's model parameters and return its checked ``SensorSpec``.

    ``p``: the node's own parameters (already declared). With ``config_file`` set, the file's
    ``kind`` sensor (``io.simconfig.load_sensor_file``, the builder every front uses) names the
    model and its values become the declarations' defaults, so a parameter set on the command
    line or in a parameters file still wins. A parameter given to the node that neither it nor
    its model declares (``gauss_sigm_m``) is a ``ParameterError`` naming it and the valid ones,
    as ``vepd study`` and ``vepd sensors simulate`` refuse it.
    """
    from vepd_ros.models import spec as _spec

    if p['config_file']:
        from vepd_ros.io.simconfig import load_sensor_file

        try:
            base = load_sensor_file(p['config_file'], kind).spec
        except (OSError, ValueError) as exc:
            raise ParameterError('config_file', p['config_file'], f'a readable sensor '
                                 f'configuration ({exc})') from None
        p['model'] = base.model
        if base.rate_hz is not None and base.rate_hz != p['rate_hz']:
            # the rate is the node's rate_hz (a study's side rate by default), never the file's
            node.get_logger().warning(
                f'config_file: its rate {base.rate_hz:g} Hz is not applied: this node publishes '
                f'at rate_hz {p["rate_hz"]:g} Hz (set rate_hz to change it)'
            )
    else:
        base = _spec.sensor_spec(kind, model=p['model'])
    declared = [q for q in base.declarations() if q.name != 'rate_hz']
    mp = declare_params(node, declared)
    # the node is built with automatically_declare_parameters_from_overrides (NODE_KWARGS), so
    # every parameter it was given is listed; one that no declaration claimed is unknown
    ours = _declared_by_us(node)
    for name in node.list_parameters([], 0).names:
        if name not in ours and name not in RCLPY_PARAMS and not name.startswith('qos_overrides.'):
            raise _spec.unknown_parameter(kind, base.model, name, node.get_parameter(name).value)
    return _spec.sensor_spec(kind, mp, model=base.model, rate_hz=p['rate_hz'],
                             source=node.get_fully_qualified_name())


NODE_KWARGS = {'automatically_declare_parameters_from_overrides': True}
"""
Node constructor arguments of the nodes that refuse a parameter they do not declare.

With them every parameter given to the node (--ros-args -p, --params-file) is declared as the
node is built, so ``node_spec`` finds the undeclared ones with the public ``list_parameters``.
"""

RCLPY_PARAMS = frozenset({'use_sim_time', 'start_type_description_service'})
"""Parameters rclpy declares on every node itself: given to a node, they are not unknown."""


def _declared_by_us(node: Node) -> set:
    """Names ``declare_params`` has declared on ``node`` (kept on the node object)."""
    try:
        return node.vepd_declared
    except AttributeError:
        node.vepd_declared = set()
        return node.vepd_declared


def declare_params(node: Node, specs: Iterable[Param]) -> dict:
    """
    Declare every spec on ``node`` (overrides from --ros-args/params files apply), validate.

    A name already declared from the node's overrides (``NODE_KWARGS``) is undeclared and declared
    again with the spec's default and descriptor: the override still wins, as rclpy keeps it, and
    the descriptor (description, a float's dynamic typing) is the spec's. A name this function
    already declared on the node is rclpy's ``ParameterAlreadyDeclaredException``, as before.
    """
    ours = _declared_by_us(node)
    values = {}
    for p in specs:
        if p.name not in ours and node.has_parameter(p.name):
            node.undeclare_parameter(p.name)
        node.declare_parameter(p.name, p.default, descriptor=_descriptor(p))
        ours.add(p.name)
        values[p.name] = p.validate(node.get_parameter(p.name).value)
    return values


def _descriptor(p: Param):
    from rcl_interfaces.msg import ParameterDescriptor

    text = p.description
    if p.choices is not None:
        text += f' (one of: {", ".join(map(str, p.choices))})'
    return ParameterDescriptor(description=text, dynamic_typing=isinstance(p.default, float))


def static_transforms_param(specs):
    """
    Return the ``StaticTF`` tree of a ``static_transforms`` parameter (judge_node, navsat_node).

    The parameter is vepd_ros's own (the pip runtime has no tf2 listener): a string or a list of
    strings in ``vepd bag --static-tf``'s spelling, parsed by ``judge.navsat.StaticTF.parse``; a
    bad spec is a ``ParameterError`` naming the parameter.
    """
    from vepd_ros.judge.navsat import StaticTF

    specs = [specs] if isinstance(specs, str) else list(specs)
    try:
        return StaticTF.parse(specs)
    except ValueError as exc:
        raise ParameterError('static_transforms', specs, str(exc)) from None


MODEL_PARAMS_NOTE = (
    'model parameters: each model declares its own (names, defaults, units): '
    '`vepd sensors models` lists them; set them with -p NAME:=VALUE like the above.'
)
RL_PARAMS_NOTE = (
    "parameters: robot_localization's own (the node reads its YAML unchanged, e.g. "
    '--params-file share/vepd_ros/config/ekf.yaml or navsat.yaml; unknown or ill-typed ones '
    "exit 2 naming them), plus vepd_ros's reset_on_run_events (bool, default false: restart "
    f'at every run truth_node announces on {TOPIC_RUN_EVENTS}).'
)


def wants_help(argv) -> bool:
    """``-h``/``--help`` among the node's own arguments (before ``--ros-args``)."""
    argv = list(argv or [])[1:]
    if '--ros-args' in argv:
        argv = argv[: argv.index('--ros-args')]
    return any(a in ('-h', '--help') for a in argv)


def node_help(
    executable: str, doc: str | None, params: Iterable[Param] | None, note: str = ''
) -> str:
    """
    Return the text ``<node> --help`` prints.

    The text ``<node> --help`` prints: the module docstring, then every parameter (the ``Param``
    specs: name, type, default, description, allowed values), then how to set them with
    ``--ros-args``.
    """
    lines = [
        f'usage: ros2 run vepd_ros {executable} [--ros-args -p NAME:=VALUE ... | --params-file '
        f'FILE]',
        '',
    ]
    if doc:
        lines += [doc.strip(), '']
    specs = list(params or [])
    if specs:
        lines.append('parameters:')
        for p in specs:
            text = p.description + (
                f' (one of: {", ".join(map(str, p.choices))})' if p.choices is not None else ''
            )
            lines.append(f'  {p.name} ({type(p.default).__name__}, default {p.default!r})')
            lines.append(f'      {text}')
    if note:
        lines += ['', note]
    lines += ['', f'example: ros2 run vepd_ros {executable} --ros-args -p use_sim_time:=true']
    return '\n'.join(lines) + '\n'

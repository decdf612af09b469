# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The three ROS graphs of vepd_ros, described once (no ROS import).

``launch/*.launch.py`` turn a graph into launch_ros ``Node`` actions on a real ROS 2 install;
``vepd run`` composes the same graph in one process (or spawns it) through the pip runtime. Tests
exercise this description, so what the launch files start is what the tests ran.

A graph is built from validated arguments (``GRAPH_ARGS[name]``, ``name:=value`` as in ``ros2
launch``) into a list of ``NodeSpec``. Each ``NodeSpec`` carries the package/executable for
launch_ros and the ``--ros-args`` (parameters, params files, remappings, namespace) that rclpy also
accepts as ``cli_args``.

sim_judge — one truth source feeding one chain per label, each in its own namespace:
    truth_node ─► /ground_truth/{odometry,imu}
    /<label>/: gps_noise_node ─► gps/fix, imu_noise_node ─► imu/data,
               navsat (navsat_transform_node | navsat_node) ─► odometry/gps,
               ekf (ekf_node | judge_node) ─► odometry/filtered,
               recorder_node ─► run files + /vepd/runs
    evaluator_node: /vepd/runs ─► /vepd/result + report
The reference chain (label ``real``, side real) uses the ``reference`` sensor preset unless
``reference`` names a directory of real runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import re
from typing import NamedTuple

from vepd_ros.models import DEFAULT_IMU_MODEL
from vepd_ros.params import Param, ParameterError, validate_params
from vepd_ros.params_file import node_section, PACKAGE, share_dir
from vepd_ros.streams import (
    TOPIC_ART_GPS_FIX, TOPIC_ART_IMU, TOPIC_GPS_FIX, TOPIC_GROUND_TRUTH, TOPIC_GROUND_TRUTH_IMU,
    TOPIC_IMU, TOPIC_INS_VELOCITY
)
from vepd_ros.yamlio import yaml_value

REFERENCE_LABEL = 'real'  # = vepd_ros.metrics.evaluator.REFERENCE (kept import-free here)
JUDGES = ('auto', 'robot_localization', 'builtin')


def robot_localization_available() -> bool:
    try:
        from ament_index_python.packages import get_package_share_directory

        get_package_share_directory('robot_localization')
        return True
    except Exception:  # noqa: BLE001
        return False


def resolve_judge(judge: str) -> str:
    if judge == 'auto':
        return 'robot_localization' if robot_localization_available() else 'builtin'
    if judge == 'robot_localization' and not robot_localization_available():
        raise ParameterError(
            'judge', judge, "'builtin' or 'auto': robot_localization is not installed here"
        )
    return judge


def label_namespace(label: str) -> str:
    """Map a model label to a ROS-legal namespace token (``ch_rw+airsim`` → ``ch_rw_airsim``)."""
    ns = re.sub(r'[^A-Za-z0-9_]', '_', label)
    return ns if ns[:1].isalpha() else 'm_' + ns


def _own(topic: str) -> str:
    """Return a suite topic as a chain's own copy: relative, so the chain's namespace applies."""
    return topic.lstrip('/')


@dataclass
class NodeSpec:
    """One node of a graph, in the terms of both launch_ros and ``--ros-args``."""

    package: str
    executable: str
    name: str
    namespace: str = ''
    parameters: list = field(default_factory=list)  # dicts and YAML file paths, in order
    remappings: list = field(default_factory=list)  # (from, to)
    role: str = ''  # truth, gps, imu, navsat, ekf, recorder, evaluator, bag, tf
    arguments: list = field(default_factory=list)  # plain command-line arguments before --ros-args

    def ros_args(self) -> list[str]:
        """Return the ``--ros-args`` that configure this node like its launch_ros counterpart."""
        args = ['--ros-args', '-r', f'__node:={self.name}']
        if self.namespace:
            args += ['-r', f'__ns:=/{self.namespace.strip("/")}']
        for p in self.parameters:
            if isinstance(p, dict):
                for k, v in p.items():
                    args += ['-p', f'{k}:={yaml_value(v)}']
            else:
                args += ['--params-file', str(p)]
        for src, dst in self.remappings:
            args += ['-r', f'{src}:={dst}']
        return args


def _csv(v: str) -> bool:
    return all(x.strip() for x in v.split(','))


def _component(v: str) -> bool:
    """
    Return one safe path component (a scenario or label becomes a file name).

    One safe path component (runs.safety.safe_component: a scenario or label becomes a file
    name).
    """
    from vepd_ros.runs.safety import safe_component

    try:
        safe_component('name', v)
    except ValueError:
        return False
    return True


def _components(v: str) -> bool:
    return all(_component(x.strip()) for x in v.split(','))


def static_tf_specs(text: str) -> list[str]:
    """
    Split a ``static_tf`` argument into ``vepd bag --static-tf`` specs (';' between transforms).

    Each spec is 'parent child x y z roll pitch yaw' or 'parent child x y z qx qy qz qw' (metres,
    radians, fixed-axis roll-pitch-yaw), parsed by ``judge.navsat.StaticTF.parse`` as ``vepd bag``
    parses them.
    """
    return [s.strip() for s in text.split(';') if s.strip()]


def _static_tf_ok(text: str) -> bool:
    from vepd_ros.judge.navsat import StaticTF

    try:
        StaticTF.parse(static_tf_specs(text))
    except ValueError:
        return False
    return True


def static_transform_publisher_args(spec: str) -> list[str]:
    """
    Return the tf2_ros ``static_transform_publisher`` arguments that publish ``spec``.

    The same numbers as the built-in judge's ``static_transforms`` in the named-option form of
    tf2_ros (Humble and later): ``--roll --pitch --yaw`` are fixed-axis radians there too (tf2's
    setRPY, the convention of ``vepd_ros.frames``); a quaternion spec passes ``--qx .. --qw``.
    """
    from vepd_ros.judge.navsat import StaticTF

    StaticTF.parse([spec])  # a bad spec is refused here, with the parser's message
    parts = spec.split()
    names = ('x', 'y', 'z') + (
        ('roll', 'pitch', 'yaw') if len(parts) == 8 else ('qx', 'qy', 'qz', 'qw')
    )
    out = []
    for name, value in zip(names, parts[2:]):
        out += [f'--{name}', value]
    return out + ['--frame-id', parts[0], '--child-frame-id', parts[1]]


_COMPONENT_MSG = "one path component (letters, digits, _ . + -; no '/', '..')"


COMMON_ARGS = [
    Param(
        'judge',
        'auto',
        'robot_localization (ekf_node + navsat_transform_node), builtin, or auto',
        choices=JUDGES,
    ),
    Param(
        'ekf_config', '', 'robot_localization ekf YAML (default: share/vepd_ros/config/ekf.yaml)'
    ),
    Param(
        'navsat_config',
        '',
        'robot_localization navsat_transform YAML (default: share/vepd_ros/config/navsat.yaml)',
    ),
    Param(
        'output_dir', 'vepd_out', 'root of the batch layout (Real/, Sim/<label>/) and the report'
    ),
    Param('k', 10, 'runs per scenario and label that complete a batch', low=2),
    Param('velocity', 'speed', 'scalar velocity compared', choices=('speed', 'vx', 'vector')),
    Param('use_sim_time', False, 'run every node on /clock'),
]

# arguments of both real-data graphs (bag_replay, live_eval)
TRUTH_TYPE_ARG = Param('truth_type', 'sbg_driver/msg/SbgGpsVel', 'message type of truth_topic')
SCENARIO_ARG = Param(
    'scenario', 'path', 'scenario label of the runs', check=_component, check_msg=_COMPONENT_MSG
)
STATIC_TF_ARG = Param(
    'static_tf',
    '',
    "sensor mountings for the judge, as vepd bag --static-tf: 'parent child x y z roll pitch "
    "yaw' (m, rad, fixed-axis) or 'parent child x y z qx qy qz qw', several separated by ';'",
    check=_static_tf_ok,
    check_msg="'parent child x y z roll pitch yaw' or 'parent child x y z qx qy qz qw' "
    "(finite numbers), several separated by ';'",
)

GRAPH_ARGS: dict[str, list[Param]] = {
    'sim_judge': COMMON_ARGS
    + [
        Param(
            'models',
            'ch_gauss,ch_rw,airsim,ch_gauss+airsim,ch_rw+airsim',
            'GPS models under test (comma list)',
            check=_csv,
            check_msg='a comma-separated list',
        ),
        Param(
            'imu_model',
            DEFAULT_IMU_MODEL,
            f"IMU model of every chain (the paper's experiments: {DEFAULT_IMU_MODEL})",
        ),
        Param(
            'gps_config',
            '',
            "configured GPS models under test, as vepd study --gps-config: '[LABEL=]FILE' "
            "items separated by ',' (a simulator's own file or a gps_noise_node parameters "
            "YAML); each is one more chain, labelled by the file's name unless LABEL is given",
        ),
        Param(
            'imu_config',
            '',
            'the IMU of every chain from a file, as vepd study --imu-config (its model and '
            'parameters, in place of imu_model)',
        ),
        Param(
            'reference',
            'rtk',
            "real side: a sensor preset run through the graph (e.g. 'rtk'), or a directory "
            'of real runs',
        ),
        Param(
            'reference_imu_model',
            '',
            'IMU model of the reference chain when it is simulated (empty: imu_model, '
            'as the offline study does)',
        ),
        Param(
            'scenarios',
            'straight,circle,sine',
            'manoeuvres (comma list)',
            check=_components,
            check_msg='a comma-separated list of ' + _COMPONENT_MSG,
        ),
        Param('duration_s', 30.0, 'length of one run (s)', low=0.0, low_open=True),
        Param(
            'time_scale',
            1.0,
            'sim seconds per wall second at most: truth_node drives /clock and paces it to the '
            'slowest chain, so a busy machine makes the run longer, never different (1.0: at '
            'most real time)',
            low=0.0,
            low_open=True,
        ),
        Param(
            'seed', 0, 'study seed (truth and sensor-noise seeds derive from it by name)', low=0
        ),
        Param('use_truth_node', True, 'false: an external simulator publishes the truth topics'),
        Param(
            'truth_odom_topic',
            TOPIC_GROUND_TRUTH,
            'truth Odometry (remap to Chrono::ROS or Gazebo topics)',
        ),
        Param('truth_imu_topic', TOPIC_GROUND_TRUTH_IMU, 'truth Imu (noise-free)'),
        Param(
            'judge_per_run',
            False,
            'start a fresh judge chain (ekf + navsat processes) for every run under ros2 launch '
            '(judge_supervisor_node); always so with judge:=robot_localization, which cannot '
            'be reset',
        ),
    ],
    'bag_replay': COMMON_ARGS
    + [
        Param(
            'bag',
            '',
            'path of the recorded bag (ros2 bag play input)',
            check=bool,
            check_msg='a bag path',
        ),
        Param('rate', 1.0, 'playback rate', low=0.0, low_open=True),
        Param('gps_topic', TOPIC_ART_GPS_FIX, 'NavSatFix topic in the bag'),
        Param('imu_topic', TOPIC_ART_IMU, 'Imu topic in the bag'),
        Param('truth_topic', TOPIC_INS_VELOCITY, 'INS / ground-truth topic in the bag'),
        TRUTH_TYPE_ARG,
        SCENARIO_ARG,
        Param(
            'run_duration_s', 0.0, 'split into runs of this length (0: one run per bag)', low=0.0
        ),
        Param('reference_dir', '', 'simulated batch to compare against (evaluator)'),
        STATIC_TF_ARG,
    ],
    'live_eval': COMMON_ARGS
    + [
        Param('gps_topic', TOPIC_ART_GPS_FIX,
              'NavSatFix from the receiver (ART: nmea_navsat_driver)'),
        Param('imu_topic', TOPIC_ART_IMU, 'Imu from the IMU driver (ART: WHEELTEC N-100)'),
        Param('truth_topic', TOPIC_INS_VELOCITY, 'INS velocity (ART: SBG Ellipse, NED)'),
        TRUTH_TYPE_ARG,
        SCENARIO_ARG,
        Param('run_duration_s', 20.0, 'length of one run (s)', low=0.0, low_open=True),
        Param(
            'reference_dir',
            '',
            'stored simulated batch to compare the rolling window of K runs against',
        ),
        STATIC_TF_ARG,
    ],
}


def graph_args(graph: str, values: dict | None = None) -> dict:
    if graph not in GRAPH_ARGS:
        raise ParameterError('graph', graph, 'one of ' + ', '.join(GRAPH_ARGS))
    return validate_params(GRAPH_ARGS[graph], values)


def _configs(a: dict) -> tuple[str, str]:
    cfg = share_dir() / 'config'
    return a['ekf_config'] or str(cfg / 'ekf.yaml'), a['navsat_config'] or str(cfg / 'navsat.yaml')


def _rl_params(path: str, node_name: str) -> dict:
    """Return the parameters the robot_localization file ``path`` gives ``node_name``."""
    return node_section(path, node_name, what='robot_localization parameter')


_SENSOR_KEY = re.compile(r'(odom|imu|pose|twist)\d+')


def _judge_nodes(a: dict, namespace: str, judge: str, extra: dict) -> list[NodeSpec]:
    ekf_yaml, navsat_yaml = _configs(a)
    # The nodes get the files' parameters explicitly rather than the files themselves: a key such
    # as ``ekf_filter_node:`` does not reach a node pushed into a namespace (each chain of
    # sim_judge has one).
    ekf_params = {**_rl_params(ekf_yaml, 'ekf_filter_node'), **extra}
    navsat_params = {**_rl_params(navsat_yaml, 'navsat_transform'), **extra}
    if namespace:
        # Inside a chain's namespace the judge's inputs are the chain's own topics: make them
        # relative.
        ekf_params.update(
            {
                k: v.lstrip('/')
                for k, v in ekf_params.items()
                if _SENSOR_KEY.fullmatch(k) and isinstance(v, str)
            }
        )
    if judge != 'builtin' or not extra.get('reset_on_run_events'):
        # robot_localization has no such switch: with it, each run continues the previous run's
        # filter.
        ekf_params.pop('reset_on_run_events', None)
        navsat_params.pop('reset_on_run_events', None)
    speedup = a.get('time_scale', a.get('rate', 1.0))  # sim (or bag) seconds per wall second
    if judge == 'robot_localization' and speedup != 1.0:
        # navsat_transform_node's timer is a wall timer (create_wall_timer, unlike ekf_node's,
        # which follows the node's clock): on /clock running ``speedup`` times faster it would
        # tick at frequency / speedup per sim second and drop fixes (it keeps only the latest).
        # Scaled, it ticks at least ``frequency`` times per sim second, as the built-in navsat
        # does on sim time (more often when the lockstep runs slower than ``speedup``).
        navsat_params['frequency'] = float(navsat_params.get('frequency', 10.0)) * speedup
    package, ekf_exe, navsat_exe = (
        ('robot_localization', 'ekf_node', 'navsat_transform_node')
        if judge == 'robot_localization'
        else (PACKAGE, 'judge_node', 'navsat_node')
    )
    return [
        NodeSpec(
            package,
            navsat_exe,
            'navsat_transform',
            namespace,
            [navsat_params],
            [('imu', _own(TOPIC_IMU))],
            role='navsat',
        ),
        NodeSpec(package, ekf_exe, 'ekf_filter_node', namespace, [ekf_params], role='ekf'),
    ]


def _per_run_judge(a: dict, namespace: str, judge: str, extra: dict) -> NodeSpec:
    """
    Return the judge_supervisor_node that starts the chain's navsat + ekf afresh for every run.

    The processes are the ones ``_judge_nodes`` describes (same parameters and remappings), without
    ``reset_on_run_events``: each is new at its run's start. The chain is up once its nodes
    publish odometry/filtered (ekf) and odometry/gps (navsat) and subscribe every topic they read:
    gps/fix and odometry/filtered (navsat), the ekf's sensor topics (odometry/gps, imu/data), names
    relative to the chain's namespace (robot_localization's nodes do not report on /vepd/progress,
    so this is all that tells their inputs are there before the run's data flows).
    """
    chain = _judge_nodes(a, namespace, judge, {**extra, 'reset_on_run_events': False})
    return NodeSpec(
        PACKAGE,
        'judge_supervisor_node',
        'judge_supervisor',
        namespace,
        [
            {
                'use_sim_time': extra.get('use_sim_time', False),
                'chain': encode_chain(chain),
                'ready_publishers': ['odometry/filtered', 'odometry/gps'],
                'ready_subscribers': [_own(TOPIC_GPS_FIX), 'odometry/filtered']
                + sorted(  # the ekf's sensor topics (odometry/gps, imu/data with config/ekf.yaml)
                    v
                    for k, v in chain[1].parameters[0].items()
                    if _SENSOR_KEY.fullmatch(k) and isinstance(v, str)
                ),
            }
        ],
        role='judge_supervisor',
    )


class ChainProcess(NamedTuple):
    """One process of a judge chain: what ``ros2 run package executable args...`` starts."""

    package: str
    executable: str
    args: list[str]


def encode_chain(nodes: list) -> list[str]:
    """Return judge_supervisor_node's ``chain`` parameter for ``nodes``: one JSON per process."""
    import json

    return [
        json.dumps({'package': n.package, 'executable': n.executable, 'args': n.ros_args()})
        for n in nodes
    ]


def decode_chain_process(text: str) -> ChainProcess:
    """
    Parse one entry of a ``chain`` parameter (``encode_chain``).

    A malformed entry raises ``ParameterError`` naming ``chain``, the entry and the form expected.
    """
    import json

    try:
        spec = json.loads(text)
        return ChainProcess(
            str(spec['package']), str(spec['executable']), [str(a) for a in spec.get('args', [])]
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ParameterError(
            'chain', text, '{"package": P, "executable": E, "args": [...]} (JSON)'
        ) from None


def decode_chain(texts: list) -> list[ChainProcess]:
    """Parse a ``chain`` parameter, skipping empty entries (the parameter's default is [''])."""
    return [decode_chain_process(text) for text in texts if text]


def paced_nodes(driver, nodes: list) -> int:
    """
    Count the nodes that report to ``driver``, the /clock source, for its lockstep (pace_nodes).

    Every node of this package on /clock does (``run_node``), the chain processes a
    judge_supervisor_node starts included (they are not launch nodes; counted from its ``chain``:
    a count short of them lets the first step go out before a node that is launched has
    reported); robot_localization's do not.
    """
    count = 0
    for m in nodes:
        params = [q for q in m.parameters if isinstance(q, dict)]
        if (
            m is driver
            or m.package != driver.package
            or not any(q.get('use_sim_time') for q in params)
        ):
            continue
        count += 1
        count += sum(
            process.package == driver.package
            for q in params
            for process in decode_chain(q.get('chain', []))
        )
    return count


BAG_QUIET_S = 3.0
"""bag_replay: the single run is complete once no message came for this long (s, wall clock)."""


def process_parameters(graph: str, n, nodes: list) -> list:
    """
    Return the parameters of node ``n`` run as a process of its own.

    The graph's parameters of node ``n`` plus what running each node as its own process needs
    (``ros2 launch`` and ``vepd run --processes`` alike): the /clock source's lockstep over the
    reporting nodes, shutting down when done, the bag_replay recorder ending its run on quiet.
    """
    params = list(n.parameters)
    extra = {}
    if n.role == 'truth' and params and params[0].get('publish_clock'):
        extra = {
            'shutdown_when_done': True,
            'pace_nodes': paced_nodes(n, nodes),
        }
    elif n.role == 'truth':
        extra = {'shutdown_when_done': True}
    elif n.role == 'evaluator' and not params[0].get('rolling'):
        extra = {'exit_when_done': True}
    elif (
        n.role == 'recorder'
        and graph == 'bag_replay'
        and params[0].get('segmentation') == 'single'
    ):
        extra = {'end_after_quiet_s': BAG_QUIET_S}
    elif n.role == 'bag':
        extra = {'shutdown_when_done': True, 'pace_nodes': paced_nodes(n, nodes)}
    if extra:
        params[0] = {**params[0], **extra}
    return params


def message_package_installed(type_name: str) -> bool:
    """
    Tell whether the Python message package of ``pkg/msg/Type`` is importable here.

    ``pkg/msg/Type``: is ``pkg``'s Python message package importable here (no import, no ROS)?
    """
    import importlib.util

    return importlib.util.find_spec(type_name.split('/')[0]) is not None


def truth_type_hint(type_name: str, known) -> str:
    """
    Tell what to do when ``type_name``'s message package is not installed here.

    What to do when ``type_name``'s message package is not installed here (the pip runtime has no
    sbg_driver): which package to install, and which of the ``known`` truth types works without it.
    """
    pkg = type_name.split('/')[0]
    usable = [t for t in known if message_package_installed(t)]
    return (
        f'a message type installed here: package {pkg} is not (on a ROS 2 install: sudo apt '
        f'install '
        f'ros-$ROS_DISTRO-{pkg.replace("_", "-")}, or rosdep install --from-paths src '
        f'--ignore-src -y); or '
        f'publish the INS velocity as one of {", ".join(usable)} and set truth_type:= to it'
    )


def _ekf_rate(a: dict) -> float:
    """
    Return the judge's output rate in Hz, checked against the judge's accepted range.

    The judge's output rate (``frequency`` of the ekf YAML; robot_localization's default 30 Hz),
    in the judge's accepted range (judge.config; the value is quoted bounded by ParameterError).
    """
    from vepd_ros.judge.config import MAX_FREQUENCY_HZ, MIN_FREQUENCY_HZ

    path = _configs(a)[0]
    rate = _rl_params(path, 'ekf_filter_node').get('frequency', 30.0)
    if (
        isinstance(rate, bool)
        or not isinstance(rate, (int, float))
        or not MIN_FREQUENCY_HZ <= rate <= MAX_FREQUENCY_HZ
    ):
        raise ParameterError(
            'frequency',
            rate,
            f'a rate in [{MIN_FREQUENCY_HZ:g}, {MAX_FREQUENCY_HZ:g}] Hz (in {path})',
        )
    return float(rate)


def _truth_rate_hz() -> float:
    from vepd_ros.truth.params import TRUTH_PARAMS

    return float(next(p.default for p in TRUTH_PARAMS if p.name == 'rate_hz'))


def build_graph(graph: str, values: dict | None = None) -> list[NodeSpec]:
    """Build the nodes of ``graph`` ('sim_judge', 'bag_replay', 'live_eval') for the arguments."""
    a = graph_args(graph, values)
    judge = resolve_judge(a['judge'])
    return {'sim_judge': _sim_judge, 'bag_replay': _bag_replay, 'live_eval': _live_eval}[graph](
        a, judge
    )


def _evaluator(a: dict, t: dict, **params) -> NodeSpec:
    """Return the evaluator node of a graph: K, output folder and velocity from ``a``."""
    return NodeSpec(
        PACKAGE,
        'evaluator_node',
        'evaluator',
        parameters=[
            {**t, 'k': a['k'], 'output_dir': a['output_dir'], 'velocity': a['velocity'], **params}
        ],
        role='evaluator',
    )


def _configured(a: dict) -> tuple[dict, dict | None, list[str]]:
    """
    Read ``gps_config`` and ``imu_config`` as vepd study does; bad files are named errors.

    Returns label → (absolute file, GPS model), the IMU's (absolute file, model) or None, and the
    warnings for the result (a configured rate the noise nodes do not apply, as vepd study says
    it): each file is checked here (``io.simconfig``, the one builder) before any node starts, and
    handed to its noise node as ``config_file``, which builds the same ``SensorSpec`` from it.
    """
    from vepd_ros.io.simconfig import configured_sensors, load_sensor_file
    from vepd_ros.models.spec import unused_rate_warning

    gps, warnings = {}, []
    items = [x.strip() for x in a['gps_config'].split(',') if x.strip()]
    try:
        for label, (path, cfg) in configured_sensors(items, 'gps_config').items():
            gps[label] = (str(path.resolve()), cfg.model)
            warnings.append(unused_rate_warning(label, 'gps', cfg.spec.rate_hz))
    except (OSError, ValueError) as exc:
        raise ParameterError('gps_config', a['gps_config'], f'readable GPS sensor '
                             f'configurations ({exc})') from None
    imu = None
    if a['imu_config']:
        if a['reference_imu_model']:
            raise ParameterError('reference_imu_model', a['reference_imu_model'],
                                 'empty when imu_config gives every chain its IMU')
        try:
            cfg = load_sensor_file(a['imu_config'], 'imu')
        except (OSError, ValueError) as exc:
            raise ParameterError('imu_config', a['imu_config'], f'a readable IMU sensor '
                                 f'configuration ({exc})') from None
        imu = (str(Path(a['imu_config']).resolve()), cfg.model)
        warnings.append(unused_rate_warning('the IMU', 'imu', cfg.spec.rate_hz))
    return gps, imu, [w for w in warnings if w]


def _sim_judge(a: dict, judge: str) -> list[NodeSpec]:
    # With truth_node the graph is always on its /clock, at every time_scale (1.0 too): sim time
    # stepped in lockstep is what makes a run repeat its bits for a seed; on the wall clock the
    # machine's scheduling decided which samples a tick saw (issue 23).
    sim_time = a['use_sim_time'] or a['use_truth_node'] or a['time_scale'] != 1.0
    t = {'use_sim_time': sim_time}
    from vepd_ros.runs.safety import safe_component

    # a label becomes a namespace and a folder: refused here, naming the argument, not by rcl
    models = [safe_component('models', m.strip()) for m in a['models'].split(',')]
    configured, imu_file, warnings = _configured(a)
    for label in configured:
        if label in models or label == REFERENCE_LABEL:
            raise ParameterError('gps_config', a['gps_config'], f'labels other than the '
                                 f'models and {REFERENCE_LABEL!r} ({label!r} given twice)')
    scenarios = ','.join(s.strip() for s in a['scenarios'].split(','))
    nodes: list[NodeSpec] = []
    n_chains = len(models) + len(configured) + (0 if Path(a['reference']).is_dir() else 1)
    per_run = a['use_truth_node'] and (a['judge_per_run'] or judge == 'robot_localization')
    if a['use_truth_node']:
        nodes.append(
            NodeSpec(
                PACKAGE,
                'truth_node',
                'truth_node',
                parameters=[
                    {
                        'scenario': scenarios,
                        'duration_s': a['duration_s'],
                        'runs': a['k'],
                        'seed': a['seed'],
                        'time_scale': a['time_scale'],
                        'publish_clock': sim_time,
                        # every chain's gps noise, imu noise and recorder subscribe to the truth
                        # odometry; with the built-in judge its navsat and ekf follow the run
                        # events too: the first run waits until every chain is up
                        'wait_for_subscribers': 3 * n_chains,
                        # (with one judge chain per run, its supervisor does)
                        'wait_for_run_subscribers': (
                            4 if per_run else 5 if judge == 'builtin' else 3
                        )
                        * n_chains,
                    }
                ],
                remappings=[
                    (TOPIC_GROUND_TRUTH, a['truth_odom_topic']),
                    (TOPIC_GROUND_TRUTH_IMU, a['truth_imu_topic']),
                ],
                role='truth',
            )
        )
    reference_is_dir = Path(a['reference']).is_dir()
    # The reference chain's label is the evaluator's reference side ('real'): its noise seeds
    # derive from that name, as the offline study's do.
    chains = (
        []
        if reference_is_dir
        else [
            (REFERENCE_LABEL, a['reference'], a['reference_imu_model'] or a['imu_model'], 'real')
        ]
    )
    chains += [(m, m, a['imu_model'], 'sim') for m in models]
    chains += [(label, model, a['imu_model'], 'sim') for label, (_, model) in configured.items()]
    imu_of = {} if imu_file is None else {'config_file': imu_file[0], 'model': imu_file[1]}
    for label, gps_model, imu_model, side in chains:
        ns = label_namespace(label)
        noise = {**t, 'seed': a['seed'], 'label': label}
        gps_of = {'config_file': configured[label][0]} if label in configured else {}
        nodes += [
            NodeSpec(
                PACKAGE,
                'gps_noise_node',
                'gps_noise',
                ns,
                # its fixes say frame base_link (gps_noise_node's default: the simulated antenna
                # is at the truth), which navsat_transform looks up as the identity
                [{**noise, 'model': gps_model, **gps_of}],
                [
                    (TOPIC_GROUND_TRUTH, a['truth_odom_topic']),
                    (TOPIC_GPS_FIX, _own(TOPIC_GPS_FIX)),
                ],
                role='gps',
            ),
            NodeSpec(
                PACKAGE,
                'imu_noise_node',
                'imu_noise',
                ns,
                [{**noise, 'model': imu_model, **imu_of}],
                [
                    (TOPIC_GROUND_TRUTH, a['truth_odom_topic']),
                    (TOPIC_GROUND_TRUTH_IMU, a['truth_imu_topic']),
                    (TOPIC_IMU, _own(TOPIC_IMU)),
                ],
                role='imu',
            ),
            # each run is judged by a freshly started filter and navsat, as in the offline study:
            # reset by run events (built-in judge) or new processes per run (supervisor)
            *(
                [_per_run_judge(a, ns, judge, t)]
                if per_run
                else _judge_nodes(a, ns, judge, {**t, 'reset_on_run_events': a['use_truth_node']})
            ),
            NodeSpec(
                PACKAGE,
                'recorder_node',
                'recorder',
                ns,
                [
                    {
                        **t,
                        'side': side,
                        'label': label,
                        'model': gps_model,
                        'output_dir': a['output_dir'],
                        'truth_topic': a['truth_odom_topic'],
                        'truth_type': 'nav_msgs/msg/Odometry',
                        'velocity': a['velocity'],
                        'segmentation': 'events',
                        'estimate_rate_hz': _ekf_rate(a),
                        'truth_rate_hz': _truth_rate_hz() if a['use_truth_node'] else 0.0,
                    }
                ],
                role='recorder',
            ),
        ]
    nodes.append(
        _evaluator(
            a,
            t,
            reference_dir=a['reference'] if reference_is_dir else '',
            expected_labels=','.join([*models, *configured]),
            scenarios=scenarios,
            seed=a['seed'],  # the study seed seeds the interval, as in vepd study
            warnings=warnings or [''],  # (a string-array parameter cannot be empty)
        )
    )
    return nodes


TRUTH_TYPES_KNOWN = (
    'nav_msgs/msg/Odometry',
    'geometry_msgs/msg/TwistStamped',
    'geometry_msgs/msg/TwistWithCovarianceStamped',
    'sbg_driver/msg/SbgGpsVel',
    'sbg_driver/msg/SbgEkfNav',
)
"""The recorder's truth types (``nodes.recorder_node.TRUTH_TYPES`` holds their readers)."""


def _real_chain(
    a: dict, judge: str, sim_time: bool, segmentation: str, rolling: bool
) -> list[NodeSpec]:
    """
    Build the real side's chain; ``rolling`` chooses how its runs are evaluated.

    ``rolling``: live_eval's window of the last k runs, re-evaluated forever; a bag is evaluated
    once, when it has given k runs (``k`` = the runs the bag holds), so bag_replay ends.
    """
    t = {'use_sim_time': sim_time}
    navsat, ekf = _judge_nodes(a, '', judge, t)  # the configuration files first: named errors
    estimate_rate_hz = _ekf_rate(a)
    if not message_package_installed(a['truth_type']):
        # refused before any node starts (under ros2 launch too), rather than a recorder exiting
        # alone
        raise ParameterError(
            'truth_type', a['truth_type'], truth_type_hint(a['truth_type'], TRUTH_TYPES_KNOWN)
        )
    # The real sensors' topics: navsat's inputs by remapping (its own names are relative), the
    # EKF's by parameter.
    navsat.remappings = [('imu', a['imu_topic']), ('gps/fix', a['gps_topic'])]
    ekf.parameters[0] = {**ekf.parameters[0], 'imu0': a['imu_topic']}
    nodes = [navsat, ekf]
    specs = static_tf_specs(a['static_tf'])
    if specs and judge == 'builtin':
        # the built-in nodes have no TF listener (the pip runtime has no tf2): the transforms are
        # their parameter
        for n in (navsat, ekf):
            n.parameters[0] = {**n.parameters[0], 'static_transforms': specs}
    elif specs:
        # robot_localization looks them up on /tf_static, as on the vehicle
        nodes += [
            NodeSpec(
                'tf2_ros',
                'static_transform_publisher',
                f'static_tf_{i}',
                arguments=static_transform_publisher_args(spec),
                role='tf',
            )
            for i, spec in enumerate(specs)
        ]
    nodes.append(
        NodeSpec(
            PACKAGE,
            'recorder_node',
            'recorder',
            parameters=[
                {
                    **t,
                    'side': 'real',
                    'label': 'real',
                    'output_dir': a['output_dir'],
                    'truth_topic': a['truth_topic'],
                    'truth_type': a['truth_type'],
                    'scenario': a['scenario'],
                    'velocity': a['velocity'],
                    'segmentation': segmentation,
                    'estimate_rate_hz': estimate_rate_hz,
                    **(
                        {'run_duration_s': a['run_duration_s']}
                        if segmentation == 'duration'
                        else {}
                    ),
                }
            ],
            role='recorder',
        )
    )
    nodes.append(_evaluator(a, t, reference_dir=a['reference_dir'], rolling=rolling))
    return nodes


def _bag_replay(a: dict, judge: str) -> list[NodeSpec]:
    """
    Build the bag_replay graph: player, judge, recorder and evaluator on the bag's clock.

    The player (role 'bag': ``ros2 bag play --clock`` under launch, ``bag_player_node`` in ``vepd
    run``), then the judge, the recorder on the INS topic and the evaluator, all on the bag's
    clock.
    """
    seg = 'duration' if a['run_duration_s'] > 0 else 'single'
    _check_bag_fix_frame(a)
    player = NodeSpec(
        PACKAGE,
        'bag_player_node',
        'bag_player',
        parameters=[
            {
                'bag': a['bag'],
                'rate': a['rate'],
                'topics': [a['gps_topic'], a['imu_topic'], a['truth_topic']],
                'wait_for_subscribers': 3,
            }
        ],
        role='bag',
    )
    return [player, *_real_chain(a, judge, True, seg, rolling=False)]


def _check_bag_fix_frame(a: dict) -> None:
    """
    Refuse a bag whose fixes navsat_transform cannot place on base_link, before any node starts.

    robot_localization's navsat_transform (and the built-in, which follows it) would publish every
    odometry/gps at the origin without a transform base_link -> the fixes' frame
    (``judge.navsat.fix_frame_problem``): the run would be scored on a meaningless estimate. The
    frame is the first fix's on ``gps_topic``; a bag or topic that cannot be read is left to the
    player, which names it.
    """
    from vepd_ros.io.bags import BagError, open_bag
    from vepd_ros.judge.navsat import fix_frame_problem, StaticTF
    from vepd_ros.judge.rl_graph import load_judge_params

    try:
        with open_bag(a['bag']) as bag:
            if not bag.has_topic(a['gps_topic']):
                return
            first = next(bag.messages([a['gps_topic']], check_counts=False), None)
    except (BagError, OSError):
        return
    if first is None:
        return
    frame = str(getattr(getattr(first[3], 'header', None), 'frame_id', ''))
    # navsat's base_link is the EKF's odometry child frame (the judge's own reading of the file)
    base = load_judge_params(_configs(a)[0], 'ekf_filter_node').ekf.base_link_frame_output
    tf = StaticTF.parse(static_tf_specs(a['static_tf']))
    problem = fix_frame_problem(tf, base, frame, give="static_tf:='{}'")
    if problem:
        raise ParameterError(
            'static_tf', a['static_tf'], f"a transform for the fixes on {a['gps_topic']} of "
            f"{a['bag']}: {problem}"
        )


def _live_eval(a: dict, judge: str) -> list[NodeSpec]:
    return _real_chain(a, judge, a['use_sim_time'], 'duration', rolling=True)


def typed_args(graph: str, raw: dict[str, str]) -> dict:
    """Launch-style string values ('10', 'true', '5.0', 'a,b') typed by each argument's default."""
    from vepd_ros.yamlio import parse_yaml

    specs = {p.name: p for p in GRAPH_ARGS[graph]}
    out = {}
    for name, text in raw.items():
        spec = specs.get(name)
        if spec is None:
            raise ParameterError(name, text, f'an argument of {graph}: ' + ', '.join(specs))
        out[name] = (
            text
            if isinstance(spec.default, str)
            else parse_yaml(
                text,
                where=f'argument {name}',
                what='argument value',
                expect=None,
                allow_empty=True,
            )
        )
    return out

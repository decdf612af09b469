# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
One sensor specification: a noise model, its parameters and its node's settings, checked once.

``SensorSpec`` is what every front hands on (a node's parameters file, a simulator's own file via
``io.simconfig``, a tune trial, ``vepd sensors simulate``'s flags, the sim_judge graph): an
immutable record built only by ``sensor_spec``, which checks every key against the two lists a
noise node declares — the node's own parameters (``GPS_NODE_PARAMS``/``IMU_NODE_PARAMS``, declared
here so ROS-free code sees them and the nodes declare from the same lists) and the model's
(``gps_model_params``/``imu_model_params``). A key in neither is a ``ParameterError`` naming it and
listing the valid ones; a value outside its declaration, or a model number of magnitude above
``MAX_MODEL_VALUE`` (such values make the model's output overflow), is refused naming the
parameter. ``split_specs`` parts one flat mapping between a GPS and an IMU model (tune, ``--set``).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Mapping

from vepd_ros.models import DEFAULT_IMU_MODEL
from vepd_ros.models.geodesy import check_datum, DEFAULT_DATUM
from vepd_ros.models.gps import gps_model_params, make_gps_model
from vepd_ros.models.imu import imu_model_params, make_imu_model
from vepd_ros.models.sensors import MIN_RATE_HZ
from vepd_ros.params import MAX_VEC3_ABS, Param, ParameterError, validate_params
from vepd_ros.streams import TOPIC_RUN_EVENTS

KINDS = ('gps', 'imu')
NODE_OF_KIND = {'gps': 'gps_noise_node', 'imu': 'imu_noise_node'}
SIDE_RATE_HZ = {'gps': 10.0, 'imu': 100.0}
"""
The sensor rates of every side of a study and of a launched graph (the noise nodes' defaults).

The paper's (NavSatFix 10 Hz, Imu 100 Hz), the same for every model, so that VEPD compares
noise, not sampling: a configured sensor's own rate (an SDF ``<update_rate>``, a parameters file's
``rate_hz``) is not applied, and ``unused_rate_warning`` says so where the result appears.
"""


def unused_rate_warning(label: str, kind: str, rate_hz: float | None) -> str | None:
    """Return the warning for a configured ``kind`` sensor whose own rate is not the side's."""
    used = SIDE_RATE_HZ[kind]
    if rate_hz is None or rate_hz == used:
        return None
    return (f'{label}: the configured rate {rate_hz:g} Hz is not used: every model runs at '
            f'{used:g} Hz, the rate of every side of a study (as in the paper; VEPD compares '
            'noise, not sampling)')


MAX_MODEL_VALUE = MAX_VEC3_ABS
"""Largest magnitude of any number a model parameter holds (scalars as vectors): a σ of 1e308
(an SDF stddev, a CARLA attribute) turns every output into inf or NaN."""

ROS_OWN_PARAMS = ('use_sim_time',)
"""Parameters rclpy declares on every node itself: valid in a node's section, not the model's."""

TRUTH_STREAM_PARAMS = [
    Param(
        'max_gap_s',
        1.0,
        'truth gaps longer than this are not interpolated across (s)',
        low=0.0,
        low_open=True,
    ),
    Param(
        'topic_timeout_s',
        10.0,
        'report a truth topic that has delivered nothing after this long (s, wall clock)',
        low=0.0,
        low_open=True,
    ),
]
"""Parameters every node that resamples a truth stream shares (the noise nodes)."""


def noise_chain_params(kind: str, model: str, rate_hz: float, max_rate_hz: float) -> list[Param]:
    """
    Return the parameters both noise nodes declare.

    model, seed, label, config_file, rate_hz: what the GPS and the IMU noise node (``kind`` 'gps'
    / 'imu') both declare.
    """
    return [
        Param('model', model, f'{kind.upper()} noise model (vepd sensors models)'),
        Param(
            'seed',
            0,
            "seed of the model's random streams (the study seed when label is set)",
            low=0,
        ),
        Param(
            'label',
            '',
            'label of this chain in a study: when set, the model restarts at every run start '
            f'announced on {TOPIC_RUN_EVENTS}, seeded with seeding.derive_seed(seed, "{kind}", '
            f'label, scenario, run) '
            'as the offline study does',
        ),
        Param(
            'config_file',
            '',
            'a simulator configuration (SDF/URDF, CARLA JSON/YAML, MATLAB YAML) or a parameters '
            f'YAML: its {kind.upper()} sensor gives the model and the defaults of its parameters',
        ),
        # the slowest clock models.sensors.period_ns accepts (the judge's frequency range)
        Param(
            'rate_hz',
            rate_hz,
            'output rate (Hz), ticks k/rate_hz in the truth time base',
            low=MIN_RATE_HZ,
            high=max_rate_hz,
        ),
    ]


def _datum_ok(v) -> bool:
    try:
        check_datum(v)
        return True
    except ValueError:
        return False


GPS_NODE_PARAMS = [
    *noise_chain_params('gps', 'ch_rw', SIDE_RATE_HZ['gps'], 1000.0),
    Param(
        'datum',
        list(DEFAULT_DATUM),
        'ENU origin [lat_deg, lon_deg, alt_m] (WGS-84)',
        check=_datum_ok,
        check_msg='[lat in [-90, 90], lon in [-180, 180], alt in [-1000, 100000]]',
    ),
    # the simulated antenna is where the truth is, at base_link's origin: navsat_transform looks
    # base_link -> this frame up at every fix, and without that transform puts odometry/gps at
    # the origin (getRobotOriginWorldPose)
    Param('frame_id', 'base_link', 'frame_id of /gps/fix (the antenna: at base_link origin)'),
    Param(
        'max_range_m',
        100000.0,
        'truth farther than this from the datum is dropped (m)',
        low=0.0,
        low_open=True,
    ),
    *TRUTH_STREAM_PARAMS,
]
"""gps_noise_node's own parameters (the model's come from ``gps_model_params``)."""

IMU_NODE_PARAMS = [
    *noise_chain_params('imu', DEFAULT_IMU_MODEL, SIDE_RATE_HZ['imu'], 2000.0),
    Param('frame_id', 'base_link', 'frame_id of /imu/data (FLU body frame)'),
    Param(
        'truth_source',
        'auto',
        'auto (Imu truth, else derived from odometry), imu or odometry',
        choices=['auto', 'imu', 'odometry'],
    ),
    *TRUTH_STREAM_PARAMS,
]
"""imu_noise_node's own parameters (the model's come from ``imu_model_params``)."""

NODE_PARAMS = {'gps': GPS_NODE_PARAMS, 'imu': IMU_NODE_PARAMS}
MODEL_PARAMS_OF = {'gps': gps_model_params, 'imu': imu_model_params}
_MAKE = {'gps': make_gps_model, 'imu': make_imu_model}


def _freeze(v: Any) -> Any:
    return tuple(_freeze(x) for x in v) if isinstance(v, (list, tuple)) else v


def _thaw(v: Any) -> Any:
    return [_thaw(x) for x in v] if isinstance(v, tuple) else v


@dataclass(frozen=True)
class SensorSpec:
    """
    One configured sensor: ``kind`` ('gps'/'imu'), its model and the parameters set (checked).

    Build with ``sensor_spec`` only. ``params``: the model parameters given, in the order given
    (the model's defaults fill the rest); ``rate_hz``: the sensor rate given (None: the node's
    default); ``node_params``: the node's own parameters given (seed, datum, frame_id, ...);
    ``source``: where it was read (a file, a front), for messages.
    """

    kind: str
    model: str
    items: tuple = ()
    rate_hz: float | None = None
    node_items: tuple = ()
    source: str = ''

    @property
    def params(self) -> dict:
        """Return the model parameters given, as the model takes them (a new dict)."""
        return {k: _thaw(v) for k, v in self.items}

    @property
    def node_params(self) -> dict:
        """Return the node's own parameters given (a new dict; model and rate_hz are fields)."""
        return {k: _thaw(v) for k, v in self.node_items}

    @property
    def node(self) -> str:
        """Return the noise node this sensor runs in (gps_noise_node / imu_noise_node)."""
        return NODE_OF_KIND[self.kind]

    def make_model(self, seed: int = 0):
        """Build the streaming noise model (``make_gps_model``/``make_imu_model``), seeded."""
        return _MAKE[self.kind](self.model, seed, **self.params)

    def declarations(self) -> list[Param]:
        """Return the model's parameter declarations with this spec's values as defaults."""
        from dataclasses import replace

        given = self.params
        return [replace(q, default=given[q.name]) if q.name in given else q
                for q in MODEL_PARAMS_OF[self.kind](self.model)]

    def with_params(self, values: Mapping[str, Any], source: str | None = None) -> SensorSpec:
        """Return this spec with ``values`` (model or node parameters) set over it, checked."""
        merged = {**self.node_params, **self.params, **dict(values)}
        if self.rate_hz is not None and 'rate_hz' not in values:
            merged['rate_hz'] = self.rate_hz
        return sensor_spec(self.kind, merged, model=self.model,
                           source=self.source if source is None else source)


def _valid_list(kind: str, model: str) -> str:
    model_names = sorted(q.name for q in MODEL_PARAMS_OF[kind](model))
    node_names = sorted({q.name for q in NODE_PARAMS[kind]} | set(ROS_OWN_PARAMS))
    return (f'a parameter of {NODE_OF_KIND[kind]} with model {model}: model parameters '
            f'{", ".join(model_names) or "(none)"}; node parameters {", ".join(node_names)}')


def unknown_parameter(kind: str, model: str, name: str, value: Any) -> ParameterError:
    """Return the error for a key neither node nor model declares, listing the valid ones."""
    return ParameterError(name, value, _valid_list(kind, model))


def _check_magnitude(name: str, value: Any) -> None:
    numbers = value if isinstance(value, (list, tuple)) else [value]
    for x in numbers:
        if isinstance(x, (int, float)) and not isinstance(x, bool) and (
                not math.isfinite(x) or abs(x) > MAX_MODEL_VALUE):
            raise ParameterError(
                name, value, f'numbers of magnitude <= {MAX_MODEL_VALUE:g} (larger ones make '
                'the model output overflow to inf or NaN)')


def sensor_spec(
    kind: str,
    values: Mapping[str, Any] | None = None,
    model: str | None = None,
    rate_hz: float | None = None,
    source: str = '',
) -> SensorSpec:
    """
    Build and check THE sensor specification of ``kind`` from a flat mapping of parameters.

    ``values``: any mix of the node's parameters and the model's (a node's section of a
    parameters file, a simulator file's values, a trial's values, ``name:=value`` overrides).
    ``model``: the model (else ``values['model']``, else the node's default); ``rate_hz``: the
    rate (else ``values['rate_hz']``), checked against the node's rate bounds. Raises
    ``ParameterError`` naming the first bad key (an unknown one lists the valid names).
    """
    if kind not in KINDS:
        raise ValueError(f"sensor kind {kind!r}: expected 'gps' or 'imu'")
    values = dict(values or {})
    node_specs = {q.name: q for q in NODE_PARAMS[kind]}
    if model is None:
        model = values.get('model', node_specs['model'].default)
    model = node_specs['model'].validate(model)
    model_specs = {q.name: q for q in MODEL_PARAMS_OF[kind](model)}  # a bad name: refused
    if rate_hz is None:
        rate_hz = values.get('rate_hz')
    if rate_hz is not None:
        rate_hz = node_specs['rate_hz'].validate(rate_hz)
    items, node_items = [], []
    for name, value in values.items():
        if name in ('model', 'rate_hz') and name not in model_specs:
            continue
        if name in model_specs:
            _check_magnitude(name, value)
            items.append((name, value))
        elif name in node_specs or name in ROS_OWN_PARAMS:
            node_items.append((name, value))
        else:
            raise unknown_parameter(kind, model, name, value)
    if 'rate_hz' in model_specs and rate_hz is not None:  # the IMU models that know their rate
        items = [(k, v) for k, v in items if k != 'rate_hz'] + [('rate_hz', rate_hz)]
    validate_params(model_specs.values(), dict(items))
    validate_params(
        [q for q in node_specs.values() if q.name in dict(node_items)],
        {k: v for k, v in node_items if k not in ROS_OWN_PARAMS})
    for k in ROS_OWN_PARAMS:
        if k in dict(node_items) and not isinstance(dict(node_items)[k], bool):
            raise ParameterError(k, dict(node_items)[k], 'a bool')
    return SensorSpec(
        kind,
        model,
        # the values as given (checked above): what a result.json lists stays as the user wrote it
        tuple((k, _freeze(v)) for k, v in items),
        None if rate_hz is None else float(rate_hz),
        tuple((k, _freeze(v)) for k, v in node_items),
        source,
    )


def split_specs(
    gps_model: str, imu_model: str, values: Mapping[str, Any] | None, source: str = ''
) -> tuple[SensorSpec, SensorSpec]:
    """
    Part one flat mapping of model parameters between a GPS and an IMU model; both checked.

    A name neither model declares is a ``ParameterError`` naming it and listing both models'
    parameters (a tune trial, ``vepd sensors simulate --set``).
    """
    gps_names = {q.name for q in gps_model_params(gps_model)}
    imu_names = {q.name for q in imu_model_params(imu_model)}
    parts: dict[str, dict] = {'gps': {}, 'imu': {}}
    for k, v in (values or {}).items():
        if k not in gps_names | imu_names:
            raise ParameterError(
                k, v, f'a parameter of the GPS model {gps_model} ('
                + (', '.join(sorted(gps_names)) or 'none') + f') or the IMU model {imu_model} ('
                + (', '.join(sorted(imu_names)) or 'none') + ')')
        for kind, names in (('gps', gps_names), ('imu', imu_names)):
            if k in names:
                parts[kind][k] = v
    return (sensor_spec('gps', parts['gps'], gps_model, source=source),
            sensor_spec('imu', parts['imu'], imu_model, source=source))

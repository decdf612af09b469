# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Read a simulator's own sensor configuration into vepd_ros noise models.

* SDF or URDF (``read_sdf``): every ``<sensor>`` of type gps/navsat (Gazebo Classic ``<gps>``, gz
  ``<navsat>``) and imu, with their ``<noise>`` blocks (gz spelling: one block per axis under
  ``<angular_velocity>``/``<linear_acceleration>``; Gazebo Classic's older ``<imu><noise>`` with
  ``<rate>``/``<accel>`` for all three axes), and hector_gazebo_plugins' GPS ``<plugin>``.
  ``<update_rate>`` becomes the sensor's rate. A navsat ``<velocity_sensing>`` block is read and
  checked but not kept: NavSatFix carries no velocity, so it reaches no judge. hector's
  ``<status>`` becomes the published NavSatStatus (``fix_status``).
* CARLA (``read_carla``): a blueprint attribute dictionary as JSON or YAML, keyed by blueprint id
  (``sensor.other.gnss``/``sensor.other.imu``), or carla-ros-bridge's objects file (sensors with a
  ``type``); attribute values may be strings as CARLA stores them. ``sensor_tick`` is the period.
* MATLAB (``read_matlab``): YAML with a ``gpsSensor`` and/or an ``imuSensor`` mapping of their
  properties; the imuSensor's ``Accelerometer``/``Gyroscope`` are sub-mappings of accelparams /
  gyroparams properties, scalars expanded to the 3 axes as MATLAB does, ``MeasurementRange: .inf``
  (or ``Inf``) for no saturation. Temperature terms are refused off the standard 25 °C, the
  gyroscope's AccelerationBias unless 0; the magnetometer is ignored with a warning.

Each returns ``SensorConfig`` records; a malformed or unsupported element is a ``ValueError``
naming the file, the element and its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import functools
import math
from pathlib import Path
import re
from xml.parsers import expat

from vepd_ros.models import simulators as sim
from vepd_ros.models.spec import NODE_OF_KIND, sensor_spec, SensorSpec
from vepd_ros.params import ParameterError

MAX_CONFIG_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class SensorConfig:
    """
    One sensor read from a simulator's configuration: its checked ``SensorSpec`` and where it is.

    ``spec`` is built by ``models.spec.sensor_spec`` (the one builder every front uses): the
    model's and the node's declarations, their bounds, the rate bounds the nodes enforce.
    """

    spec: SensorSpec
    name: str  # the sensor's name in the file
    line: int  # line of the sensor's element (0 where the format has none)
    warnings: tuple = ()

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def params(self) -> dict:
        return self.spec.params

    @property
    def rate_hz(self) -> float | None:
        return self.spec.rate_hz


def _config(path, kind: str, model: str | None, *, params: dict, name: str, line: int,
            rate_hz: float | None = None, warnings=(),
            rate_field: str = 'rate_hz') -> SensorConfig:
    """
    Build a ``SensorConfig``: the values checked by ``sensor_spec``, errors naming the file.

    An unknown parameter, a value outside its declaration (a σ that would overflow the model's
    output, a rate the node refuses) is a ValueError naming the file, the line (when the format
    has lines) and the sensor.
    """
    try:
        spec = sensor_spec(kind, params, model=model, rate_hz=rate_hz, source=str(path))
    except ParameterError as exc:
        where = f'line {line}: ' if line else ''
        if exc.name == 'rate_hz' and rate_field != 'rate_hz':
            exc = (f'{rate_field}: the rate {exc.value!r} Hz is outside what '
                   f'{NODE_OF_KIND[kind]} runs ({exc.expected})')
        raise ValueError(f'{path}: {where}{name or kind}: {exc}') from None
    return SensorConfig(spec, name, line, tuple(warnings))


@dataclass
class _Element:
    tag: str
    attrs: dict
    line: int
    children: list = field(default_factory=list)
    text: str = ''
    path: str = ''

    def child(self, tag):
        """
        Return the one child ``tag`` (None when absent); a duplicated one is refused.

        SDF gives each of these elements once; which of two a simulator would read is not
        something a user should have to know, so the file is refused naming both lines.
        """
        found = [c for c in self.children if c.tag == tag]
        if len(found) > 1:
            raise ValueError(f'{self.path}: line {found[1].line}: <{self.tag}><{tag}> given '
                             f'twice (also line {found[0].line}): give it once')
        return found[0] if found else None


def _parse_xml(path: Path) -> _Element:
    """Parse XML into elements that know their line; entity declarations are refused."""
    from vepd_ros.yamlio import MAX_DEPTH, read_input

    data = read_input(path, what='simulator XML file', max_bytes=MAX_CONFIG_BYTES)
    parser = expat.ParserCreate()
    stack: list[_Element] = [_Element('#document', {}, 0)]

    def start(tag, attrs):
        if len(stack) > MAX_DEPTH:  # the tree is walked recursively (_walk)
            raise ValueError(f'{path}: line {parser.CurrentLineNumber}: elements nested deeper '
                             f'than {MAX_DEPTH} levels; refused')
        el = _Element(tag, attrs, parser.CurrentLineNumber, path=str(path))
        stack[-1].children.append(el)
        stack.append(el)

    def end(tag):
        stack.pop()

    def text(data):
        stack[-1].text += data

    def entity(*args):
        raise ValueError(f'{path}: line {parser.CurrentLineNumber}: entity declarations refused')

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler, parser.EntityDeclHandler = text, entity
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ValueError(f'{path}: not well-formed XML ({exc})') from None
    return stack[0]


def _walk(el: _Element):
    yield el
    for c in el.children:
        yield from _walk(c)


DECIMAL = re.compile(r'[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?')
"""A number as an XML Schema double or a C ``strtod`` decimal writes it: no ``_`` (Python's
``float`` reads ``0_4`` as 4), no hex, no ``inf``/``nan`` (refused as not finite anyway)."""


def decimal(text: str) -> float | None:
    """Return the finite number ``text`` spells as a plain decimal, else None."""
    text = text.strip()
    if not DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _number(path, el: _Element, count: int = 1):
    """Return the float (or list of ``count`` floats) in an element's text (``DECIMAL``)."""
    values = [decimal(v) for v in el.text.split()]
    if None in values:
        values = []
    if len(values) != count or not all(math.isfinite(v) for v in values):
        want = ('a finite decimal number' if count == 1 else f'{count} finite decimal numbers') \
            + " (digits, '.', an exponent: no '_', hex, inf or nan)"
        raise ValueError(f'{path}: line {el.line}: <{el.tag}>: expected {want}, '
                         f'got {el.text.strip()[:40]!r}')
    return values[0] if count == 1 else values


def _noise_block(path, noise: _Element | None) -> dict:
    """Return the seven Gaussian-noise values of a ``<noise>`` element (zeros when absent)."""
    values = dict.fromkeys(sim.GZ_NOISE_ELEMENTS, 0.0)
    if noise is None:
        return values
    kind = noise.attrs.get('type') or (noise.child('type').text.strip()
                                       if noise.child('type') is not None else 'gaussian')
    if kind == 'none':
        return values
    if kind not in ('gaussian', 'gaussian_quantized'):
        raise ValueError(f'{path}: line {noise.line}: <noise type={kind!r}>: only gaussian, '
                         'gaussian_quantized and none are Gazebo noise models vepd_ros runs')
    for c in noise.children:
        if c.tag in values:
            values[c.tag] = _number(path, noise.child(c.tag))  # a duplicate: refused
        elif c.tag != 'type':
            raise ValueError(f'{path}: line {c.line}: <noise><{c.tag}>: unknown element '
                             f'(expected {", ".join(sim.GZ_NOISE_ELEMENTS)})')
    return values


def _rate(path, sensor: _Element, warnings: list) -> float | None:
    """Return ``<update_rate>`` (None when absent; 0, Gazebo's "every step", with a warning)."""
    el = sensor.child('update_rate')
    if el is None:
        return None
    rate = _number(path, el)
    if rate == 0:
        warnings.append(f'{path}: line {el.line}: <update_rate> 0 (every simulation step): '
                        "the node's default rate is used")
        return None
    return rate


def _gz_gps(path, sensor: _Element, body: _Element) -> SensorConfig:
    params, warnings = {}, []
    pos = body.child('position_sensing')
    for axis in ('horizontal', 'vertical'):
        holder = pos.child(axis) if pos is not None else None
        block = _noise_block(path, holder.child('noise') if holder is not None else None)
        params.update({f'position_sensing.{axis}.{k}': v for k, v in block.items()})
    vel = body.child('velocity_sensing')
    for axis in ('horizontal', 'vertical'):
        # read and checked, not kept: NavSatFix has no velocity, so it reaches no judge
        holder = vel.child(axis) if vel is not None else None
        _noise_block(path, holder.child('noise') if holder is not None else None)
    sigma = params['position_sensing.horizontal.stddev']
    if sigma > 1e-3:
        warnings.append(
            f'{path}: line {sensor.line}: horizontal position stddev {sigma:g} is applied by '
            f'Gazebo in DEGREES (≈ {sigma * 111_000:.3g} m), although the SDF documentation '
            'says metres (gz-sensors #325)')
    rate = _rate(path, sensor, warnings)
    return _config(path, 'gps', 'gz_navsat', params=params, name=sensor.attrs.get('name', ''),
                   line=sensor.line, rate_hz=rate, warnings=warnings, rate_field='<update_rate>')


def _gz_imu(path, sensor: _Element, body: _Element) -> SensorConfig:
    params = {}
    legacy = body.child('noise')
    for quantity, legacy_tag in (('angular_velocity', 'rate'), ('linear_acceleration', 'accel')):
        holder = body.child(quantity)
        per_axis = []
        for axis in 'xyz':
            el = holder.child(axis) if holder is not None else None
            if el is not None:
                per_axis.append(_noise_block(path, el.child('noise')))
            elif legacy is not None:
                # Gazebo Classic's <imu><noise><rate>/<accel>: the same block for every axis
                sub = legacy.child(legacy_tag)
                block = _noise_block(path, sub) if sub is not None else _noise_block(path, None)
                if sub is not None and legacy.child('type') is not None:
                    block = _noise_block(path, _Element('noise', {'type': legacy.child(
                        'type').text.strip()}, legacy.line, sub.children))
                per_axis.append(block)
            else:
                per_axis.append(_noise_block(path, None))
        for k in sim.GZ_NOISE_ELEMENTS:
            params[f'{quantity}.{k}'] = [b[k] for b in per_axis]
    warnings: list = []
    rate = _rate(path, sensor, warnings)
    return _config(path, 'imu', 'gz_imu', params=params, name=sensor.attrs.get('name', ''),
                   line=sensor.line, rate_hz=rate, warnings=warnings, rate_field='<update_rate>')


HECTOR_VECTOR_ELEMENTS = ('offset', 'drift', 'driftFrequency', 'gaussianNoise', 'velocityOffset',
                          'velocityDrift', 'velocityDriftFrequency', 'velocityGaussianNoise')


def _hector_gps(path, plugin: _Element) -> SensorConfig:
    params = {}
    for c in plugin.children:
        if c.tag in HECTOR_VECTOR_ELEMENTS:
            c = plugin.child(c.tag)  # a duplicate: refused
            params[c.tag] = _number(path, c, 3) if len(c.text.split()) == 3 \
                else [_number(path, c)] * 3
    warnings = []
    status = plugin.child('status')
    if status is not None:
        # NavSatStatus.status the plugin publishes (STATUS_FIX 0 by default)
        value = _number(path, status)
        if value not in (0, 1, 2):
            raise ValueError(f'{path}: line {status.line}: <status>: expected 0 (FIX), 1 (SBAS) '
                             f'or 2 (GBAS) for a published fix, got {status.text.strip()!r}')
        params['fix_status'] = int(value)
    service = plugin.child('service')
    if service is not None and _number(path, service) != 1:
        warnings.append(f'{path}: line {service.line}: <service> {service.text.strip()}: '
                        'vepd_ros publishes SERVICE_GPS (1)')
    rate = plugin.child('updateRate')
    return _config(
        path, 'gps', 'hector_gps', params=params, name=plugin.attrs.get('name', ''),
        line=plugin.line, rate_hz=_number(path, rate) if rate is not None else None,
        warnings=warnings, rate_field='<updateRate>',
    )


def read_sdf(path) -> list[SensorConfig]:
    """Return the GPS and IMU sensors of an SDF or URDF file (module docstring)."""
    path = Path(path)
    root = _parse_xml(path)
    out = []
    for el in _walk(root):
        if el.tag == 'sensor':
            kind = el.attrs.get('type', '')
            if kind in ('gps', 'navsat'):
                body = el.child('navsat') or el.child('gps')
                out.append(_gz_gps(path, el, body or _Element(kind, {}, el.line)))
            elif kind == 'imu':
                out.append(_gz_imu(path, el, el.child('imu') or _Element('imu', {}, el.line)))
        elif el.tag == 'plugin' and 'hector_gazebo_ros_gps' in el.attrs.get('filename', ''):
            out.append(_hector_gps(path, el))
    if not out:
        raise ValueError(f'{path}: no <sensor type="gps|navsat|imu"> and no hector GPS plugin')
    return out


CARLA_IGNORED = {'sensor_tick', 'noise_seed', 'role_name', 'id', 'type', 'spawn_point',
                 'attached_objects', 'attach_to'}


def _carla_sensor(path, blueprint: str, attrs: dict, name: str) -> SensorConfig:
    kind, model, specs = (('gps', 'carla_gnss', sim.CARLA_GNSS_PARAMS)
                          if blueprint == 'sensor.other.gnss'
                          else ('imu', 'carla_imu', sim.CARLA_IMU_PARAMS))
    known = {p.name for p in specs}
    params = {}
    for key, value in attrs.items():
        if key in known:
            number = _carla_number(value)
            if number is None:
                raise ValueError(f'{path}: {name}: {key}: expected a finite decimal number '
                                 f"(no '_', hex, inf or nan), got {value!r}"[:300])
            params[key] = number
        elif key.startswith('noise_') and key not in CARLA_IGNORED:
            raise ValueError(f'{path}: {name}: {key}: not a {blueprint} attribute '
                             f'(known: {", ".join(sorted(known))})')
    tick = attrs.get('sensor_tick')
    rate = None
    if tick not in (None, ''):
        seconds = _carla_number(tick)
        if seconds is None or seconds < 0:
            raise ValueError(f'{path}: {name}: sensor_tick: expected seconds >= 0, got {tick!r}')
        rate = 1.0 / seconds if seconds > 0 else None   # 0: every simulation step
    return _config(path, kind, model, params=params, name=name, line=0, rate_hz=rate, warnings=(),
                   rate_field='sensor_tick (1/rate)')


def _carla_number(value) -> float | None:
    """Return an attribute's finite number: a YAML/JSON number or a string as CARLA writes it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return decimal(value) if isinstance(value, str) else None


KEY_TOKEN = re.compile(r'[A-Za-z_][\w.]*')


def _key_line(path: Path, keys: list[str]) -> int | None:
    """Return the line of the last of ``keys`` found in order in a YAML/JSON file's text."""
    from vepd_ros.yamlio import read_input

    try:
        data = read_input(path, what='configuration', max_bytes=MAX_CONFIG_BYTES)
    except (OSError, ValueError):
        return None
    lines = data.decode('utf-8', errors='replace').splitlines()
    found, start = None, 0
    for key in keys:
        pattern = re.compile(r'(^|[\s{,"\'])' + re.escape(key) + r'["\']?\s*:')
        for i in range(start, len(lines)):
            if pattern.search(lines[i]):
                found, start = i + 1, i
                break
    return found


def _with_key_lines(read):
    """Make a YAML/JSON reader's errors name the line of the key they are about."""
    @functools.wraps(read)
    def wrapped(path):
        try:
            return read(path)
        except ValueError as exc:
            prefix, msg = f'{Path(path)}: ', str(exc)
            if not msg.startswith(prefix) or msg[len(prefix):].startswith('line '):
                raise
            rest = msg[len(prefix):]
            keys = [k for part in rest.split(': ')[:2] for k in KEY_TOKEN.findall(part)
                    for k in k.split('.')]
            line = _key_line(Path(path), keys)
            if line is None:
                raise
            raise ValueError(f'{prefix}line {line}: {rest}') from None
    return wrapped


@_with_key_lines
def read_carla(path) -> list[SensorConfig]:
    """Return the GNSS and IMU sensors of a CARLA attribute file (JSON or YAML)."""
    from vepd_ros.yamlio import load_yaml

    path = Path(path)
    data = load_yaml(path, what='CARLA sensor attributes')   # JSON is YAML 1.2
    out = []

    def visit(node, where):
        if isinstance(node, dict):
            kind = node.get('type')
            if kind in ('sensor.other.gnss', 'sensor.other.imu'):
                out.append(_carla_sensor(path, kind, node, str(node.get('id', where))))
                return
            for key, value in node.items():
                if key in ('sensor.other.gnss', 'sensor.other.imu') and isinstance(value, dict):
                    out.append(_carla_sensor(path, key, value, key))
                else:
                    visit(value, f'{where}/{key}')
        elif isinstance(node, list):
            for i, value in enumerate(node):
                visit(value, f'{where}[{i}]')

    visit(data, '')
    if not out:
        raise ValueError(f'{path}: no sensor.other.gnss or sensor.other.imu attributes found')
    return out


MATLAB_GPS_IGNORED = {'SampleRate', 'ReferenceLocation', 'ReferenceFrame', 'PositionInputFormat',
                      'RandomStream', 'Seed', 'VelocityAccuracy'}
"""gpsSensor properties read elsewhere (SampleRate) or outside the position-noise law."""

MATLAB_IMU_IGNORED = {'ReferenceFrame', 'IMUType', 'RandomStream', 'Seed'}
"""imuSensor properties outside the noise law (the frame, the stream): accepted, not used."""

MATLAB_STANDARD_TEMPERATURE_C = 25.0
"""IMUSensorSimulator.pStandardTemperature: the temperature terms vanish there."""

MATLAB_IMU_VECTORS = ('ConstantBias', 'NoiseDensity', 'BiasInstability', 'RandomWalk')
MATLAB_IMU_SCALARS = ('MeasurementRange', 'Resolution')
MATLAB_IMU_TEMPERATURE = ('TemperatureBias', 'TemperatureScaleFactor')


def _matlab_numbers(path, where: str, value, count: int | None = None) -> list[float]:
    """Return the finite numbers of a YAML scalar or list (``count`` of them when given)."""
    items = value if isinstance(value, list) else [value]
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
             for v in items) and len(items) > 0
    if not ok or (count is not None and len(items) != count):
        want = {None: 'finite numbers', 1: 'a finite number'}.get(
            count, f'{count} finite numbers')
        raise ValueError(f'{path}: {where}: expected {want}, got {value!r}'[:300])
    return [float(v) for v in items]


def _matlab_imu_sensor(path, sensor: str, props: dict) -> tuple[dict, list]:
    """Return one Accelerometer/Gyroscope mapping as ``<sensor>.<Property>`` model parameters."""
    kind = 'an accelparams' if sensor == 'Accelerometer' else 'a gyroparams'
    params, warnings = {}, []
    for key, value in props.items():
        where = f'imuSensor.{sensor}.{key}'
        name = f'{sensor}.{key}'
        if key == 'MeasurementRange' and (value in ('Inf', 'inf') or value == math.inf):
            params[name] = 0.0   # MATLAB's Inf, spelled 0 in the parameters
        elif key in MATLAB_IMU_SCALARS:
            (params[name],) = _matlab_numbers(path, where, value, 1)
            if key == 'MeasurementRange' and params[name] <= 0:
                raise ValueError(f'{path}: {where}: expected a positive number or Inf, '
                                 f'got {value!r}')
        elif key in MATLAB_IMU_VECTORS:
            numbers = _matlab_numbers(path, where, value)
            if len(numbers) not in (1, 3):
                raise ValueError(f'{path}: {where}: expected a number or 3 numbers, '
                                 f'got {value!r}'[:300])
            params[name] = numbers * 3 if len(numbers) == 1 else numbers
        elif key == 'AxesMisalignment':
            # a scalar, a 3-vector, 9 numbers (row-major) or a 3-by-3 nested list, as MATLAB
            if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
                numbers = [x for row in value for x in _matlab_numbers(path, where, row, 3)]
                numbers = numbers if len(value) == 3 else []
            else:
                numbers = _matlab_numbers(path, where, value)
            if len(numbers) not in (1, 3, 9):
                raise ValueError(f'{path}: {where}: expected a number, 3 numbers or a 3-by-3 '
                                 f'matrix, got {value!r}'[:300])
            params[name] = sim.matlab_axes_misalignment(numbers)
        elif key == 'NoiseType':
            params[name] = value
        elif key == 'BiasInstabilityCoefficients':
            if not isinstance(value, dict) or set(value) - {'Numerator', 'Denominator'}:
                raise ValueError(f'{path}: {where}: expected a mapping of Numerator and '
                                 f'Denominator, got {value!r}'[:300])
            for part, numbers in value.items():
                params[f'{name}.{part}'] = _matlab_numbers(path, f'{where}.{part}', numbers)
        elif key in MATLAB_IMU_TEMPERATURE:
            if any(_matlab_numbers(path, where, value)):
                warnings.append(f'{path}: {where}: has no effect at the standard '
                                f'{MATLAB_STANDARD_TEMPERATURE_C:g} °C; temperature is not '
                                'modelled')
        elif key == 'AccelerationBias' and sensor == 'Gyroscope':
            if any(_matlab_numbers(path, where, value)):
                raise ValueError(f'{path}: {where}: the gyroscope acceleration sensitivity '
                                 'is not modelled by vepd_ros (set it to 0)')
        else:
            known = sorted({p.name.split('.', 1)[1].split('.')[0] for p in sim.MATLAB_IMU_PARAMS
                            if p.name.startswith(sensor + '.')} | set(MATLAB_IMU_TEMPERATURE))
            if sensor == 'Gyroscope':
                known.append('AccelerationBias')
            raise ValueError(f'{path}: {where}: not {kind} property (known: '
                             f'{", ".join(known)})')
    return params, warnings


def _matlab_imu(path, imu: dict) -> SensorConfig:
    """Return the imuSensor mapping (SampleRate, Accelerometer, Gyroscope, ...) as matlab_imu."""
    params, warnings = {}, []
    for key, value in imu.items():
        if key == 'SampleRate':
            (params['SampleRate'],) = _matlab_numbers(path, 'imuSensor.SampleRate', value, 1)
        elif key in ('Accelerometer', 'Gyroscope'):
            if not isinstance(value, dict):
                raise ValueError(f'{path}: imuSensor.{key}: expected a mapping of '
                                 f'{"accelparams" if key == "Accelerometer" else "gyroparams"} '
                                 'properties')
            more, notes = _matlab_imu_sensor(path, key, value)
            params.update(more)
            warnings += notes
        elif key == 'Temperature':
            (temperature,) = _matlab_numbers(path, 'imuSensor.Temperature', value, 1)
            if temperature != MATLAB_STANDARD_TEMPERATURE_C:
                raise ValueError(f'{path}: imuSensor.Temperature: {temperature:g} °C: the '
                                 'temperature terms are not modelled by vepd_ros (only the '
                                 f'standard {MATLAB_STANDARD_TEMPERATURE_C:g} °C)')
        elif key in ('Magnetometer', 'MagneticField'):
            warnings.append(f'{path}: imuSensor.{key}: ignored (sensor_msgs/Imu has no '
                            'magnetometer)')
        elif key not in MATLAB_IMU_IGNORED:
            raise ValueError(f'{path}: imuSensor.{key}: not an imuSensor property vepd_ros '
                             'reads (SampleRate, Accelerometer, Gyroscope, Temperature, '
                             + ', '.join(sorted(MATLAB_IMU_IGNORED)) + ')')
    return _config(path, 'imu', 'matlab_imu', params=params, name='imuSensor', line=0,
                   rate_hz=params.get('SampleRate', 100.0), warnings=warnings,
                   rate_field='SampleRate')


@_with_key_lines
def read_matlab(path) -> list[SensorConfig]:
    """Return the gpsSensor and imuSensor of a MATLAB parameters YAML (module docstring)."""
    from vepd_ros.yamlio import load_yaml

    path = Path(path)
    data = load_yaml(path, what='MATLAB sensor parameters')
    out = []
    if not isinstance(data, dict):
        raise ValueError(f'{path}: expected a mapping with gpsSensor and/or imuSensor')
    for other in sorted(set(data) - {'gpsSensor', 'imuSensor'}, key=str):
        raise ValueError(f'{path}: {other}: not supported (vepd_ros reads gpsSensor and '
                         'imuSensor)')
    gps = data.get('gpsSensor')
    if isinstance(gps, dict):
        known = {p.name for p in sim.MATLAB_GPS_PARAMS}
        rate = gps.get('SampleRate')
        params = {k: v for k, v in gps.items() if k in known}
        ignored = sorted(set(gps) - known - MATLAB_GPS_IGNORED)
        if ignored:
            raise ValueError(f'{path}: gpsSensor: {ignored[0]}: not a gpsSensor position-noise '
                             f'property (known: {", ".join(sorted(known))}, SampleRate)')
        if rate is not None:
            (rate,) = _matlab_numbers(path, 'gpsSensor.SampleRate', rate, 1)
        out.append(_config(path, 'gps', 'matlab_gps', params=params, name='gpsSensor', line=0,
                           rate_hz=rate, warnings=(),
                           rate_field='SampleRate'))
    imu = data.get('imuSensor')
    if 'imuSensor' in data and not isinstance(imu, dict):
        raise ValueError(f'{path}: imuSensor: expected a mapping of imuSensor properties')
    if isinstance(imu, dict):
        out.append(_matlab_imu(path, imu))
    if not out:
        raise ValueError(f'{path}: no gpsSensor or imuSensor mapping')
    return out


READERS = {'sdf': read_sdf, 'carla': read_carla, 'matlab': read_matlab}


XML_SUFFIXES = ('.sdf', '.urdf', '.xacro', '.world', '.xml')


MAX_CONFIG_CHAIN = 4
"""Most parameters files one ``config_file`` may lead through to a simulator's file."""


def load_sensor_file(path, kind: str, _chain: tuple = ()) -> SensorConfig:
    """
    Return the ``kind`` ('gps' or 'imu') sensor of any configuration file a user keeps.

    An SDF/URDF (by suffix or a leading ``<``), a ROS 2 parameters YAML with a gps_noise_node /
    imu_noise_node section (what ``vepd sensors from-*`` and ``vepd calibrate`` write), a MATLAB
    YAML (``gpsSensor``/``imuSensor``) or a CARLA attribute file: the first sensor of that kind.
    """
    from vepd_ros.yamlio import load_yaml, read_input

    path = Path(path)
    head = read_input(path, what='sensor configuration file',
                      max_bytes=MAX_CONFIG_BYTES)[:256].lstrip()
    if path.suffix.lower() in XML_SUFFIXES or head.startswith(b'<'):
        sensors = read_sdf(path)
    else:
        data = load_yaml(path, what='sensor configuration')
        node = NODE_OF_KIND[kind]
        if isinstance(data, dict) and any(k in data for k in (node, '/' + node, '/**')):
            sensors = [_node_params_sensor(path, kind, _chain)]
        elif isinstance(data, dict) and ({'gpsSensor', 'imuSensor'} & set(data)):
            sensors = read_matlab(path)
        else:
            sensors = read_carla(path)
    for c in sensors:
        if c.kind == kind:
            return c
    found = ', '.join(f'{c.kind} {c.name!r}' for c in sensors) or 'none'
    raise ValueError(f'{path}: no {kind.upper()} sensor in it (found: {found})')


def _node_params_sensor(path: Path, kind: str, chain: tuple) -> SensorConfig:
    """
    Read a noise node's section of a ROS 2 parameters YAML as the node reads it.

    Every key is checked as the node checks it (``sensor_spec``): a model parameter, a node
    parameter (kept, e.g. ``topic_timeout_s``), or an error naming it and the valid ones. A
    ``config_file`` in the section gives the model and the defaults, as in the node.
    """
    from vepd_ros.params_file import node_section

    section = dict(node_section(path, NODE_OF_KIND[kind]))
    name = NODE_OF_KIND[kind]
    if section.get('config_file'):
        inner = Path(str(section['config_file']))
        inner = inner if inner.is_absolute() else path.parent / inner
        chain = (*chain, path.resolve())
        if inner.resolve() in chain or len(chain) > MAX_CONFIG_CHAIN:
            raise ValueError(f'{path}: {name}: config_file {inner}: a loop or more than '
                             f'{MAX_CONFIG_CHAIN} parameters files deep')
        base = load_sensor_file(inner, kind, chain)
        section = {**base.params, **{k: v for k, v in section.items() if k != 'model'},
                   'model': base.model}
        if base.rate_hz is not None and 'rate_hz' not in section:
            section['rate_hz'] = base.rate_hz
    return _config(path, kind, None, params=section, name=name, line=0)


def configured_sensors(items, what: str = '--gps-config', kind: str = 'gps') -> dict:
    """
    Return label → ``SensorConfig`` of ``[LABEL=]FILE`` items (``vepd study --gps-config``).

    The label defaults to the file's name; it becomes a path component (``safe_component``) and
    must be unique. The one reading of configured models the study and the sim_judge graph share.
    """
    from vepd_ros.runs.safety import safe_component

    out = {}
    for item in items:
        label, _, path = item.rpartition('=') if '=' in item and not Path(item).exists() \
            else ('', '', item)
        cfg = load_sensor_file(path, kind)
        label = safe_component(f'{what} label', label or Path(path).stem)
        if label in out:
            raise ValueError(f'{what} {item}: label {label!r} given twice')
        out[label] = (Path(path), cfg)
    return out

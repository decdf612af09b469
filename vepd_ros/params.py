# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Parameter specifications: declared once, validated once, shared by nodes, the CLI and the pipeline.

A node lists its ``Param`` specs; ``validate_params`` turns a mapping of raw values into checked
values or raises ``ParameterError`` naming the parameter, the bad value and what was expected. No
ROS import: ``vepd_ros.nodes.params`` declares the same specs on an rclpy node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

from vepd_ros.yamlio import parse_yaml, quote


class ParameterError(ValueError):
    """
    A parameter value is outside what its spec allows.

    The message quotes the name and the value with ``yamlio.quote`` (cut to ~80 characters): both
    may come from the user (a file, ``name:=value``), so callers pass the raw value.
    """

    def __init__(self, name: str, value: Any, expected: str):
        self.name, self.value, self.expected = name, value, expected
        super().__init__(f'parameter {quote(str(name))}: got {quote(value)}, expected {expected}')

    def __reduce__(self):
        # rebuilt from the constructor's own arguments: the default (class, self.args) would call
        # __init__ with the message alone, so an error raised in a worker process could not be
        # unpickled in the parent and a multiprocessing pool would wait for it forever
        return type(self), (self.name, self.value, self.expected)


@dataclass(frozen=True)
class Param:
    """
    One parameter: name, default (its type is the parameter's type), description and constraints.

    ``choices`` restricts to listed values; ``low``/``high`` bound numbers (``low_open`` makes the
    lower bound strict, e.g. a rate must be > 0); ``check`` is an extra predicate with its own
    message.
    """

    name: str
    default: Any
    description: str = ''
    choices: Sequence[Any] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    check: Callable[[Any], bool] | None = None
    check_msg: str = ''
    aliases: Mapping[str, Any] = field(default_factory=dict)

    def expected(self) -> str:
        if self.choices is not None:
            return 'one of ' + ', '.join(repr(c) for c in self.choices)
        parts = []
        if self.low is not None:
            parts.append(f'{">" if self.low_open else ">="} {self.low}')
        if self.high is not None:
            parts.append(f'<= {self.high}')
        kind = type(self.default).__name__
        return (
            f'a {kind}{" " + " and ".join(parts) if parts else ""}'
            f'{"; " + self.check_msg if self.check_msg else ""}'
        )

    def validate(self, value: Any) -> Any:
        value = self.aliases.get(value, value) if isinstance(value, str) else value
        d = self.default
        if isinstance(d, bool):
            if not isinstance(value, bool):
                raise ParameterError(self.name, value, 'a bool')
        elif isinstance(d, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError(self.name, value, self.expected())
        elif isinstance(d, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParameterError(self.name, value, self.expected())
            value = float(value)
            if not math.isfinite(value):
                raise ParameterError(self.name, value, 'a finite number')
        elif isinstance(d, str):
            if not isinstance(value, str):
                raise ParameterError(self.name, value, self.expected())
        elif isinstance(d, (list, tuple)):
            if not isinstance(value, (list, tuple)):
                raise ParameterError(self.name, value, 'a list')
            value = list(value)
        if self.choices is not None and value not in self.choices:
            raise ParameterError(self.name, value, self.expected())
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.low is not None and (value <= self.low if self.low_open else value < self.low):
                raise ParameterError(self.name, value, self.expected())
            if self.high is not None and value > self.high:
                raise ParameterError(self.name, value, self.expected())
        if self.check is not None and not self.check(value):
            raise ParameterError(self.name, value, self.expected())
        return value


MAX_VEC3_ABS = 1e6
"""Largest |component| of a 3-vector model parameter (m, m/s, rad/s, m/s^2, ...): a noise of 1e300
would overflow every product downstream."""


def vec3_param(nonneg: bool = True) -> dict:
    """
    Return the ``Param`` keywords that check a bounded 3-vector.

    ``Param`` keywords (``check``, ``check_msg``) for a 3-vector of finite numbers bounded by
    ``MAX_VEC3_ABS`` (and >= 0 when ``nonneg``): the GPS and IMU models' sigmas, means, biases.
    """

    def check(v) -> bool:
        return len(v) == 3 and all(
            isinstance(x, (int, float))
            and not isinstance(x, bool)
            and math.isfinite(x)
            and abs(x) <= MAX_VEC3_ABS
            and (x >= 0 or not nonneg)
            for x in v
        )

    return {
        'check': check,
        'check_msg': f'3 finite numbers of magnitude <= {MAX_VEC3_ABS:g}'
        + (' and >= 0' if nonneg else ''),
    }


def validate_params(
    specs: Iterable[Param], values: Mapping[str, Any] | None = None, allow_unknown: bool = False
) -> dict[str, Any]:
    """
    Defaults overridden by ``values``, each checked against its spec.

    Unknown names are errors.
    """
    specs = list(specs)
    values = dict(values or {})
    known = {p.name for p in specs}
    unknown = sorted(set(values) - known)
    if unknown and not allow_unknown:
        raise ParameterError(
            unknown[0], values[unknown[0]], 'a known parameter: ' + ', '.join(sorted(known))
        )
    return {p.name: p.validate(values.get(p.name, p.default)) for p in specs}


def parse_assignments(items: Iterable[str]) -> dict[str, Any]:
    """
    Parse ``name:=value`` overrides into a dict.

    ``name:=value`` strings (ros2 launch style) → dict, values parsed as YAML scalars/lists by
    the package's one YAML reader (``yamlio``: YAML 1.2 floats such as ``1e3``, bounded messages);
    a value that is not YAML is a ``ParameterError`` naming the parameter.
    """
    out: dict[str, Any] = {}
    for item in items:
        if ':=' not in item:
            raise ParameterError(item, item, "an assignment 'name:=value'")
        name, raw = item.split(':=', 1)
        name = name.strip()
        if not raw.strip():
            out[name] = ''
            continue
        try:
            out[name] = parse_yaml(raw, where='the value', what='parameter', expect=None)
        except ValueError as exc:
            raise ParameterError(name, raw, f'a YAML value ({exc})') from None
    return out

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

r"""
Safe YAML reading: one loader for every YAML file the package reads (contract C4).

``load_yaml(path, what=..., expect=dict)`` reads a file with PyYAML's safe loader and turns every
way a file can be wrong into a ``ValueError`` that names the file (and the line where YAML knows
it) and what was expected, never a traceback:

* binary or non-UTF-8 content, a file larger than ``MAX_BYTES``;
* YAML syntax errors, tags the safe loader does not construct (``!!python/object`` ...: never
  executed, refused);
* alias expansion (\"billion laughs\"): the document's node graph is measured with every alias
  expanded before anything is constructed (memoised, so the check costs one pass over the distinct
  nodes) and refused above ``MAX_NODES``; nesting deeper than ``MAX_DEPTH`` likewise;
* a top-level value of the wrong type (``expect``), or an empty document unless ``allow_empty``.

Scalars follow YAML 1.2's core schema where YAML 1.1 (PyYAML's default) surprises users of ROS
parameter files: ``1.0e12`` and ``1e-3`` are floats (1.1 needs a dot and a signed exponent),
``1_0`` and ``1:30`` are strings, not 10 and 90. Booleans keep the 1.1 words (``yes``/``on``),
which ROS 2's parameter parser accepts as well. Messages quote at most ``MAX_QUOTE`` characters of
input.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import stat

import yaml

MAX_BYTES = 4 * 1024 * 1024
"""Largest YAML file read (configuration files are a few KB): bounds a load to ~8 CPU s
(benchmarks/bench_yamlio.py: ~2 CPU s per MB with libyaml, ~6 with the pure-Python loader)."""
MAX_NODES = 1_000_000
"""Largest document, counted in nodes with every alias expanded."""
MAX_DEPTH = 200
"""Deepest nesting of sequences and mappings."""
MAX_QUOTE = 80

# libyaml (CSafeLoader: C scanner, parser and composer, ~4x faster than the pure-Python loader,
# whose ~100 us per value made a 0.7 MB file take over a minute on a busy machine). Its composer
# recurses in C and would overflow the stack on deeply nested collections (a segfault), so the
# nesting is measured first on libyaml's event stream (iterative) and refused beyond MAX_DEPTH.
# Without libyaml, the pure-Python loader (its recursion ends in RecursionError, refused below).
_Base = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
_C = _Base is not yaml.SafeLoader

_INT_12 = re.compile(r'^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$')
_FLOAT_12 = re.compile(
    r'^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?'
    r'|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$'
)
_INT_TAG = 'tag:yaml.org,2002:int'
_FLOAT_TAG = 'tag:yaml.org,2002:float'


class _Loader(_Base):  # type: ignore[valid-type,misc]  # a base chosen at run time (C or not)
    """The safe loader with YAML 1.2 core-schema ints and floats."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# ints before floats: '10' is an int, '10.0' and '1e3' are floats
_Loader.add_implicit_resolver(_INT_TAG, _INT_12, list('-+0123456789'))
_Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT_12, list('-+.0123456789'))


def _construct_int(loader, node):
    text = loader.construct_scalar(node)
    if text.startswith('0o'):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith('0x') else int(text)


def _construct_float(loader, node):
    text = loader.construct_scalar(node).lower()
    if text.endswith('.inf'):
        return float('-inf') if text.startswith('-') else float('inf')
    if text == '.nan':
        return float('nan')
    return float(text)


_Loader.add_constructor(_INT_TAG, _construct_int)
_Loader.add_constructor(_FLOAT_TAG, _construct_float)


def quote(value, limit: int = MAX_QUOTE) -> str:
    """
    Return the repr of ``value`` cut to ``limit`` characters.

    Repr of ``value`` cut to ``limit`` characters: THE bounded text of a value in an error
    message (messages never format unbounded input; ``ParameterError`` formats its value with it).
    A long string or container is cut before its repr is built.
    """
    if isinstance(value, (list, dict, tuple, set)) and len(value) > limit:
        return f'<{type(value).__name__} of {len(value)} items>'
    if isinstance(value, (str, bytes)) and len(value) > limit:
        value = value[:limit]  # the repr of a huge string is never built
    try:
        text = repr(value)
    except RecursionError:
        text = f'<{type(value).__name__}>'
    return text if len(text) <= limit else text[: limit - 3] + '...'


def _check_size(node, where: str) -> None:
    """
    Refuse a YAML node graph that is too large or too deep.

    Refuse a node graph that expands (aliases followed) beyond MAX_NODES or nests beyond
    MAX_DEPTH.
    """
    sizes: dict = {}
    depth_of: dict = {}
    # iterative post-order walk: a deep document must not exhaust Python's recursion
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        key = id(n)
        if key in sizes:
            continue
        children = (
            n.value
            if isinstance(n, yaml.SequenceNode)
            else ([c for pair in n.value for c in pair] if isinstance(n, yaml.MappingNode) else ())
        )
        if not done:
            if isinstance(n, yaml.MappingNode):
                _check_unique_keys(n, where)
            if key in depth_of:  # on the current path already: a recursive alias
                raise ValueError(f'{where}: a recursive YAML alias (line {n.start_mark.line + 1})')
            depth_of[key] = True
            stack.append((n, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total, depth = 1, 0
        for c in children:
            total += sizes[id(c)][0]
            depth = max(depth, sizes[id(c)][1])
        depth += 1 if children else 0
        if total > MAX_NODES:
            raise ValueError(
                f'{where}: the document expands to more than {MAX_NODES} values '
                f'(aliases '
                f'followed, line {n.start_mark.line + 1}); refused'
            )
        if depth > MAX_DEPTH:
            raise ValueError(
                f'{where}: nested deeper than {MAX_DEPTH} levels (line '
                f'{n.start_mark.line + 1}); refused'
            )
        sizes[key] = (total, depth)
        del depth_of[key]


def _check_unique_keys(n, where: str) -> None:
    """
    Refuse a mapping that repeats a key.

    YAML 1.2 requires unique keys; PyYAML keeps the last silently, so a parameter given twice
    (say, a σ edited in one place and left in another) would run with whichever came last.
    """
    seen: dict = {}
    for k, _ in n.value:
        if not isinstance(k, yaml.ScalarNode) or k.tag == 'tag:yaml.org,2002:merge':
            continue
        first = seen.get((k.tag, k.value))
        if first is not None:
            raise ValueError(
                f'{where}, line {k.start_mark.line + 1}: key {quote(k.value)} given twice (first '
                f'on line {first}); keep one'
            )
        seen[(k.tag, k.value)] = k.start_mark.line + 1


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return ' or '.join(_type_name(e) for e in t)
    return {
        dict: 'a mapping',
        list: 'a list',
        str: 'a string',
        float: 'a number',
        int: 'an integer',
    }.get(t, t.__name__)


def _check_depth(text: str, where: str) -> None:
    """Refuse nesting beyond MAX_DEPTH before libyaml's recursive composer sees the text."""
    depth = 0
    opens = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    closes = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for ev in yaml.parse(text, Loader=_Base):
        if isinstance(ev, opens):
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(
                    f'{where}: nested deeper than {MAX_DEPTH} levels (line '
                    f'{ev.start_mark.line + 1}); refused'
                )
        elif isinstance(ev, closes):
            depth -= 1


def parse_yaml(text: str, *, where: str, what: str, expect=dict, allow_empty: bool = False):
    """``load_yaml`` on text already read (``where`` names its origin in messages)."""
    try:
        if _C:
            _check_depth(text, where)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_size(node, where)
                doc = loader.construct_document(node)
            else:
                doc = None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f', line {mark.line + 1}' if mark is not None else ''
        problem = str(exc.problem or exc.context or 'invalid YAML')[:200]
        raise ValueError(f'{where}{line}: not valid {what} YAML ({problem})') from None
    except yaml.YAMLError as exc:
        raise ValueError(f'{where}: not valid {what} YAML ({str(exc)[:200]})') from None
    except RecursionError:
        raise ValueError(f'{where}: {what} YAML nested too deeply; refused') from None
    if doc is None:
        if allow_empty:
            return expect() if isinstance(expect, type) else None
        raise ValueError(f'{where}: the {what} file is empty (expected {_type_name(expect)})')
    if expect is not None and not isinstance(doc, expect):
        raise ValueError(
            f'{where}: expected {what} as {_type_name(expect)} at the top level, got '
            f'{type(doc).__name__} {quote(doc)}'
        )
    return doc


def load_yaml(path, *, what: str, expect=dict, allow_empty: bool = False):
    """
    Load the YAML document of ``path``, checked to be of type ``expect``.

    The YAML document of ``path`` (``what`` says what the file is, e.g.
    'ekf configuration'), checked to be of type ``expect`` (a type or tuple; None: any). ValueError
    naming the file otherwise; FileNotFoundError when it does not exist.
    """
    p = Path(path)
    where = str(p)
    data = read_input(p, what=f'{what} YAML file', max_bytes=MAX_BYTES)
    if b'\x00' in data:
        raise ValueError(f'{where}: binary content (NUL bytes), expected a {what} YAML text file')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b'\n') + 1
        raise ValueError(
            f'{where}, line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at '
            f'offset '
            f'{exc.start}); expected a {what} YAML file'
        ) from None
    return parse_yaml(text, where=where, what=what, expect=expect, allow_empty=allow_empty)


def read_input(path, *, what: str, max_bytes: int, error=ValueError,
               prefix: bool = False) -> bytes:
    """
    Return the bytes of the input file ``path``: THE opening of a file a command reads whole.

    Opened without blocking and checked on the open descriptor, so a FIFO, a device or a socket
    is refused before a byte is read (a FIFO would block forever, /dev/zero never end); a file
    larger than ``max_bytes`` is refused after reading at most ``max_bytes`` + 1 bytes (with
    ``prefix``: its first ``max_bytes`` bytes are returned, to tell a format by its head).
    ``FileNotFoundError`` when it does not exist; ``error`` (a ValueError subclass) naming the
    file and ``what`` otherwise.
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, 'O_NOCTTY', 0))
    except FileNotFoundError:
        raise FileNotFoundError(f'{p}: no such {what}') from None
    except OSError as exc:
        raise error(f'{p}: cannot read the {what} ({exc.strerror})') from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ('a directory' if stat.S_ISDIR(st.st_mode) else
                    'a FIFO' if stat.S_ISFIFO(st.st_mode) else 'a special file')
            raise error(f'{p}: {kind}; expected a {what} (a regular file)')
        if st.st_size > max_bytes and not prefix:
            raise error(f'{p}: {st.st_size} bytes, more than the {max_bytes} a {what} may have')
        os.set_blocking(fd, True)
        chunks, n = [], 0
        while n <= max_bytes:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        data = b''.join(chunks)
        if n > max_bytes:
            if prefix:
                return data[:max_bytes]
            raise error(f'{p}: more than the {max_bytes} bytes a {what} may have')
        return data
    except OSError as exc:
        raise error(f'{p}: cannot read the {what} ({exc.strerror})') from None
    finally:
        os.close(fd)


def yaml_value(v) -> str:
    """
    Return ``v`` written as one YAML scalar or flow list (a ``name:=value`` or launch default).

    Booleans are ``true``/``false``; a string stays bare when it reads back as that string
    (a ROS name, a path), else it is quoted; numbers and other values are their repr.
    """
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (list, tuple)):
        return '[' + ', '.join(yaml_value(x) for x in v) + ']'
    if isinstance(v, str):
        return (
            v
            if v
            and re.fullmatch(r'[A-Za-z_/][A-Za-z0-9_./+,:-]*', v)
            and v not in ('true', 'false')
            else repr(v)
        )
    return repr(v)


__all__ = [
    'load_yaml',
    'read_input',
    'parse_yaml',
    'quote',
    'yaml_value',
    'MAX_BYTES',
    'MAX_NODES',
    'MAX_DEPTH',
]

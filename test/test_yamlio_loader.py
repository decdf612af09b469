# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
yamlio on libyaml (issue 24): the same documents as the pure-Python loader, bounded nesting.

The loader moved to PyYAML's CSafeLoader (C scanner/parser/composer) for speed
(benchmarks/bench_yamlio.py prints the ratio); these tests hold its results to the pure-Python
loader's on the YAML 1.2 number rules and its refusals (depth, aliases, tags) to the same.
"""

import subprocess
import sys

import pytest
from vepd_ros import yamlio
from vepd_ros.yamlio import load_yaml
import yaml

DOCS = [
    'a: 1_0\nb: 1:30\nc: 1e-3\nd: 1.0e12\ne: 0x1f\nf: 0o17\ng: .inf\nh: -.Inf\ni: yes\nj: 010\n',
    'k: [1, 2.5, -3, +4, .5, 5., ~, null, "1", \'x\']\nl: {m: {n: [true, False, on, off]}}\n',
    'p: &a [1, 2]\nq: *a\nr: !!str 12\ns: 2001-12-14\nt: "\\u00e9"\n',
    '- 1\n- - 2\n  - 3\n- {x: 1e5, y: 1E+5, z: -1.5e-5}\n',
]


class _Pure(yaml.SafeLoader):
    """The pure-Python loader with yamlio's resolvers and constructors."""


_Pure.yaml_implicit_resolvers = yamlio._Loader.yaml_implicit_resolvers
_Pure.yaml_constructors = yamlio._Loader.yaml_constructors


@pytest.mark.parametrize('text', DOCS)
def test_same_values_as_the_pure_python_loader(text):
    got = yamlio.parse_yaml(text, where='t', what='test', expect=None)
    want = yaml.load(text, Loader=_Pure)
    assert repr(got) == repr(want)


def test_uses_libyaml_when_present():
    assert yamlio._C == bool(getattr(yaml, '__with_libyaml__', False))


@pytest.mark.parametrize('text', ['[' * 100_000, '{a: ' * 5000 + '1' + '}' * 5000,
                                  '- ' * 300 + '1', 'a:\n' + ''.join(
                                      '  ' * i + f'k{i}:\n' for i in range(1, 400))])
def test_deep_nesting_refused_naming_the_source(text):
    with pytest.raises(ValueError, match=r'^where\b.*(nested|not valid)'):
        yamlio.parse_yaml(text, where='where', what='test', expect=None)


def test_alias_bomb_and_python_tags_refused():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + ''.join(
        f'{chr(98 + i)}: &{chr(98 + i)} [' + ','.join(['*' + chr(97 + i)] * 10) + ']\n'
        for i in range(6))
    with pytest.raises(ValueError, match='expands to more than'):
        yamlio.parse_yaml(bomb, where='w', what='test')
    with pytest.raises(ValueError, match='w, line 1: not valid'):
        yamlio.parse_yaml('a: !!python/object/apply:os.system ["x"]', where='w', what='test')


@pytest.mark.parametrize(
    'text, line, key',
    [
        ('gps_noise:\n  ros__parameters:\n    sigma_m: 1.0\n    sigma_m: 2.0\n', 4, 'sigma_m'),
        ('a: {x: 1, y: 2, x: 3}\n', 1, 'x'),
        ('a: 1\nb: 2\na: 1\n', 3, 'a'),
    ],
)
def test_a_repeated_key_is_refused_naming_line_and_key(text, line, key):
    # PyYAML keeps the last silently: a parameter edited in one place and left in another would
    # run with whichever came last
    with pytest.raises(ValueError, match=rf"^f.yaml, line {line}: key '{key}' given twice"):
        yamlio.parse_yaml(text, where='f.yaml', what='test', expect=None)


def test_distinct_keys_and_merge_keys_still_load():
    text = 'base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"1": a\n1: b\n'
    assert yamlio.parse_yaml(text, where='f', what='t') == {
        'base': {'x': 1}, 'other': {'x': 1, 'y': 2}, '1': 'a', 1: 'b'}


BILLION_LAUGHS = (
    '\n'.join(
        ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        + [f'a{i}: &a{i} [' + ','.join([f'*a{i - 1}'] * 9) + ']' for i in range(1, 10)]
    )
    + '\n'
)


def _write(tmp_path, text, name='c.yaml', mode='w'):
    p = tmp_path / name
    if mode == 'wb':
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def test_yaml12_scalars(tmp_path):
    text = 'a: 1.0e12\nb: 1e-3\nc: 1_0\nd: 1:30\ne: 10\nf: yes\n'
    doc = load_yaml(_write(tmp_path, text), what='test')
    assert doc == {'a': 1e12, 'b': 1e-3, 'c': '1_0', 'd': '1:30', 'e': 10, 'f': True}
    assert isinstance(doc['a'], float) and isinstance(doc['e'], int)


def test_billion_laughs_refused_fast_in_bounded_memory(tmp_path):
    p = _write(tmp_path, BILLION_LAUGHS)
    assert p.stat().st_size < 2048
    # in a child process: its peak memory is its own
    code = (
        'import resource, sys, time\nfrom vepd_ros.yamlio import load_yaml\nt = time.time()\n'
        'try:\n    load_yaml(sys.argv[1], what="test")\nexcept ValueError as e:\n    '
        'print(e)\n'
        'print(time.time() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n'
    )
    out = subprocess.run(
        [sys.executable, '-c', code, str(p)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert 'expands to more than' in out[0] and str(p) in out[0]
    _, maxrss_kb = out[1].split()  # (timing stays out of unit tests: benchmarks/)
    assert int(maxrss_kb) < 500_000  # the expanded document would need gigabytes


def test_deep_nesting_refused(tmp_path):
    p = _write(tmp_path, '[' * 5000 + ']' * 5000)
    with pytest.raises(ValueError, match='nested'):
        load_yaml(p, what='test')


def test_long_values_truncated_in_messages(tmp_path):
    p = _write(tmp_path, '- ' + 'x' * 100000 + '\n')
    with pytest.raises(ValueError) as exc:
        load_yaml(p, what='test')
    assert len(str(exc.value)) < 300

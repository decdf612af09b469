# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Test the parameter declarations and ``name:=value`` assignments (vepd_ros.params)."""

from __future__ import annotations

import pytest
from vepd_ros.params import ParameterError


def test_assignments_read_by_the_one_yaml_reader_with_bounded_errors():
    """
    Read ``name:=value`` values as YAML, refusing bad ones by parameter name.

    `name:=value` values follow the package's YAML reader (1e3 is a float, as in a parameter
    file); a value that is not YAML, or a huge one, is a ParameterError naming the parameter with
    the value cut (never a yaml traceback, never the whole input echoed).
    """
    from vepd_ros.params import parse_assignments

    assert parse_assignments(['rate_hz:=1e3', 'xs:=[1, 2]', 'on:=true', 's:=']) == {
        'rate_hz': 1000.0,
        'xs': [1, 2],
        'on': True,
        's': '',
    }
    with pytest.raises(ParameterError, match="parameter 'xs'.*a YAML value"):
        parse_assignments(['xs:=[1, 2'])
    huge = 'x' * 100_000
    for item in (huge, 'v:=[' + huge):
        with pytest.raises(ParameterError) as err:
            parse_assignments([item])
        assert len(str(err.value)) < 600
    assert len(str(ParameterError('n' * 10_000, list(range(10_000)), 'z'))) < 300


def test_parameter_error_crosses_a_process_boundary():
    """
    Carry a worker's ParameterError to the parent with its fields.

    A ParameterError raised in a study worker reaches the parent: it pickles with its fields
    (a pool whose worker error cannot be unpickled waits forever).
    """
    import multiprocessing as mp
    import pickle

    from vepd_ros.models.imu import make_imu_model

    err = pickle.loads(pickle.dumps(ParameterError('model', 'zzz', 'an IMU model')))
    assert (err.name, err.value, err.expected) == ('model', 'zzz', 'an IMU model')
    assert str(err) == str(ParameterError('model', 'zzz', 'an IMU model'))
    with mp.get_context('fork').Pool(1) as pool:
        res = pool.apply_async(make_imu_model, ('zzz',))
        with pytest.raises(ParameterError, match='zzz'):
            res.get(timeout=60)

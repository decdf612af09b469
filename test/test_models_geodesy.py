# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""Geodesy and satellite geometry: round trips, DOP against hand-computed geometry, occlusion."""

import math

import numpy as np
import pytest
from vepd_ros.models import satellites as S
from vepd_ros.models.geodesy import (
    check_datum,
    DEFAULT_DATUM,
    enu_rotation,
    enu_to_geodetic,
    geodetic_to_ecef,
    geodetic_to_enu,
)


@pytest.mark.parametrize('conversion', ['wgs84', 'chrono_spherical', 'usarsim_flat'])
def test_enu_geodetic_round_trip(conversion):
    enu = np.array([[0.0, 0.0, 0.0], [100.0, -50.0, 3.0], [-2000.0, 1500.0, -10.0]])
    lat, lon, alt = enu_to_geodetic(enu, DEFAULT_DATUM, conversion)
    np.testing.assert_allclose(
        geodetic_to_enu(lat, lon, alt, DEFAULT_DATUM, conversion), enu, atol=1e-6
    )


def test_wgs84_scale_at_the_datum():
    lat, lon, _ = enu_to_geodetic([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], DEFAULT_DATUM)
    # meridian and prime-vertical radii of WGS-84 at 43.07°
    a, f = 6378137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    phi = math.radians(43.07)
    m = a * (1 - e2) / (1 - e2 * math.sin(phi) ** 2) ** 1.5
    n = a / math.sqrt(1 - e2 * math.sin(phi) ** 2)
    assert math.radians(lat[0] - 43.07) * (m + 260.0) == pytest.approx(1.0, rel=1e-6)
    assert math.radians(lon[1] + 89.4) * (n + 260.0) * math.cos(phi) == pytest.approx(
        1.0, rel=1e-6
    )


def test_datum_out_of_range_names_the_field():
    with pytest.raises(ValueError, match='latitude'):
        check_datum((91.0, 0.0, 0.0))
    with pytest.raises(ValueError, match='longitude'):
        check_datum((0.0, 181.0, 0.0))
    with pytest.raises(ValueError, match='altitude'):
        check_datum((0.0, 0.0, float('nan')))


def _sats_at(az_el_deg, datum=DEFAULT_DATUM, dist=2.0e7):
    rx = geodetic_to_ecef(*datum)
    r = enu_rotation(datum[0], datum[1])
    out = []
    for az, el in az_el_deg:
        a, e = math.radians(az), math.radians(el)
        d_enu = np.array([math.cos(e) * math.sin(a), math.cos(e) * math.cos(a), math.sin(e)])
        out.append(rx + dist * (r.T @ d_enu))
    return np.array(out)[None]


def test_dop_against_hand_computed_geometry():
    """
    DOP values match a geometry computed by hand.

    Zenith plus three satellites at 30° elevation, 120° apart: GᵀG =
    [[9/8,0,0,0],[0,9/8,0,0],[0,0,7/4,−5/2], [0,0,−5/2,4]] ⇒ HDOP = √(16/9) = 4/3, VDOP =
    √(4/0.75), TDOP = √(1.75/0.75).
    """
    g = S.sky_geometry(
        _sats_at([(0, 90), (0, 30), (120, 30), (240, 30)]), np.zeros((1, 3)), DEFAULT_DATUM
    )
    assert g.n_visible[0] == 4
    np.testing.assert_allclose(np.degrees(g.elevation[0]), [90, 30, 30, 30], atol=1e-6)
    d = S.dops(S.dop_matrix(g))
    assert d['HDOP'][0] == pytest.approx(4 / 3, rel=1e-6)
    assert d['VDOP'][0] == pytest.approx(math.sqrt(4 / 0.75), rel=1e-6)
    assert d['TDOP'][0] == pytest.approx(math.sqrt(1.75 / 0.75), rel=1e-6)
    assert d['EDOP'][0] == pytest.approx(math.sqrt(8 / 9), rel=1e-6)


def test_elevation_mask_and_fewer_than_four():
    g = S.sky_geometry(
        _sats_at([(0, 90), (0, 4), (120, 30), (240, 30)]), np.zeros((1, 3)), DEFAULT_DATUM, 5.0
    )
    assert g.n_visible[0] == 3
    assert np.isnan(S.dops(S.dop_matrix(g))['HDOP'][0])


def test_satellite_behind_a_box_is_lost():
    sats = _sats_at([(0, 90), (90, 20), (200, 40), (300, 60)])
    free = S.sky_geometry(sats, np.zeros((1, 3)), DEFAULT_DATUM)
    assert free.visible[0].tolist() == [True] * 4
    # a 20 m high wall 10 m east of the receiver hides the satellite at azimuth 90°, elevation 20°
    # only
    wall = S.parse_obstacles([{'type': 'box', 'min': [10, -5, 0], 'max': [11, 5, 20]}])
    g = S.sky_geometry(sats, np.zeros((1, 3)), DEFAULT_DATUM, obstacles=wall)
    assert g.visible[0].tolist() == [True, False, True, True]
    # the same as an extruded polygon (YAML text)
    poly = S.parse_obstacles(
        '[{type: polygon, vertices: [[10, -5], [11, -5], [11, 5], [10, 5]], z_min: 0, z_max: 20}]'
    )
    g2 = S.sky_geometry(sats, np.zeros((1, 3)), DEFAULT_DATUM, obstacles=poly)
    assert g2.visible[0].tolist() == [True, False, True, True]
    # a wall too low (2 m) does not hide it (ray at 20° is 3.6 m up at 10 m)
    low = S.parse_obstacles([{'type': 'box', 'min': [10, -5, 0], 'max': [11, 5, 2]}])
    assert S.sky_geometry(sats, np.zeros((1, 3)), DEFAULT_DATUM, obstacles=low).visible[0].all()


def test_nominal_constellation_at_madison_matches_the_reference_check():
    t = np.arange(0, 86400, 600.0)
    u = S.unix_times(t, '2024-02-07T00:00:00Z')
    c = S.NominalConstellation()
    assert len(c) == 24
    x = c.ecef(u)
    np.testing.assert_allclose(np.linalg.norm(x, axis=-1), S.NOMINAL_A_M)
    g = S.sky_geometry(x, np.zeros((len(t), 3)), (43.0723, -89.4125, 260.0))
    assert 6 <= g.n_visible.min() and g.n_visible.max() <= 11
    assert 7.0 < g.n_visible.mean() < 8.2
    assert 0.9 < np.median(S.dops(S.dop_matrix(g))['HDOP']) < 1.15


def test_tle_constellation_with_sgp4(tmp_path):
    # a synthetic GPS-like element set (i 55.5°, 2.0057 rev/day), written for this test
    tle = tmp_path / 'gps.tle'
    tle.write_text(
        'GPS BIIR-2 (PRN 13)\n'
        '1 24876U 97035A   24037.50000000  .00000000  00000-0  00000-0 0  9990\n'
        '2 24876  55.5000 100.0000 0040000  50.0000 310.0000  2.00565000 10001\n'
    )
    c = S.TleConstellation(tle)
    r = np.linalg.norm(c.ecef(np.array([1707264000.0])), axis=-1)
    assert 2.5e7 < r[0, 0] < 2.7e7
    with pytest.raises(FileNotFoundError):
        S.TleConstellation(tmp_path / 'missing.tle')

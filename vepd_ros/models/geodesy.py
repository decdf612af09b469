# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
WGS-84 geodesy about a datum: local ENU metres <-> geodetic coordinates.

WGS-84 geodesy about a datum: local ENU metres <-> geodetic (lat, lon, ellipsoidal alt),
vectorised.

The ENU frame is the local tangent plane at the datum (REP-105 ``odom`` is treated as this plane,
as robot_localization's navsat_transform does with ``zero_altitude`` off). Conversions use
pymap3d's exact WGS-84 ellipsoid forms. Two approximate conversions the anchors use are offered for
compatibility:

* ``chrono_spherical``: Chrono::Sensor's ``Cartesian2GPS`` (sphere R = 6 371 000 m,
  equirectangular, the longitude scale taken at the *new* latitude).
* ``usarsim_flat``: USARSim's flat-earth scales (111 200 m per degree of latitude, 71 670 m per
  degree of longitude, a fixed constant whatever the latitude), the paper of seed 004's "flat-earth
  assumption".
"""

from __future__ import annotations

import math

import numpy as np
import pymap3d

DEFAULT_DATUM = (43.070, -89.400, 260.0)
"""The ART lab's datum (lat deg, lon deg, ellipsoidal alt m), as the paper's dART demo sets it."""

CHRONO_EARTH_RADIUS_M = 6_371_000.0
USARSIM_M_PER_DEG_LAT = 111_200.0
USARSIM_M_PER_DEG_LON = 71_670.0
ALT_RANGE_M = (-1_000.0, 100_000.0)

CONVERSIONS = ('wgs84', 'chrono_spherical', 'usarsim_flat')


def check_datum(datum, name: str = 'datum') -> tuple[float, float, float]:
    """(lat, lon, alt) as floats, or ValueError naming ``name`` and the valid ranges."""
    try:
        lat, lon, alt = (float(v) for v in datum)
    except (TypeError, ValueError):
        raise ValueError(f'{name}: expected [lat_deg, lon_deg, alt_m], got {datum!r}') from None
    if not (math.isfinite(lat) and -90.0 <= lat <= 90.0):
        raise ValueError(f'{name}: latitude {lat!r} outside [-90, 90] deg')
    if not (math.isfinite(lon) and -180.0 <= lon <= 180.0):
        raise ValueError(f'{name}: longitude {lon!r} outside [-180, 180] deg')
    if not (math.isfinite(alt) and ALT_RANGE_M[0] <= alt <= ALT_RANGE_M[1]):
        raise ValueError(
            f'{name}: altitude {alt!r} outside [{ALT_RANGE_M[0]:g}, {ALT_RANGE_M[1]:g}] m'
        )
    return lat, lon, alt


def enu_to_geodetic(enu, datum=DEFAULT_DATUM, conversion: str = 'wgs84'):
    """ENU metres (n,3) → (lat, lon, alt) arrays (n,) about ``datum``."""
    lat0, lon0, alt0 = check_datum(datum)
    enu = np.atleast_2d(np.asarray(enu, dtype=float))
    e, n, u = enu[:, 0], enu[:, 1], enu[:, 2]
    if conversion == 'wgs84':
        lat, lon, alt = pymap3d.enu2geodetic(e, n, u, lat0, lon0, alt0)
        return np.asarray(lat, float), np.asarray(lon, float), np.asarray(alt, float)
    if conversion == 'chrono_spherical':
        lat = lat0 + np.degrees(n / CHRONO_EARTH_RADIUS_M)
        lon = lon0 + np.degrees(e / (CHRONO_EARTH_RADIUS_M * np.cos(np.radians(lat))))
        lon = (lon + 180.0) % 360.0 - 180.0
        return lat, lon, alt0 + u
    if conversion == 'usarsim_flat':
        return lat0 + n / USARSIM_M_PER_DEG_LAT, lon0 + e / USARSIM_M_PER_DEG_LON, alt0 + u
    raise ValueError(f'conversion: got {conversion!r}, expected one of {", ".join(CONVERSIONS)}')


def geodetic_to_enu(lat, lon, alt, datum=DEFAULT_DATUM, conversion: str = 'wgs84') -> np.ndarray:
    """
    Convert geodetic coordinates to ENU metres about ``datum``.

    (lat, lon, alt) arrays → ENU metres (n,3) about ``datum`` (inverse of ``enu_to_geodetic``).
    """
    lat0, lon0, alt0 = check_datum(datum)
    lat, lon, alt = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (lat, lon, alt))
    if conversion == 'wgs84':
        e, n, u = pymap3d.geodetic2enu(lat, lon, alt, lat0, lon0, alt0)
    elif conversion == 'chrono_spherical':
        n = np.radians(lat - lat0) * CHRONO_EARTH_RADIUS_M
        dlon = (lon - lon0 + 180.0) % 360.0 - 180.0
        e = np.radians(dlon) * CHRONO_EARTH_RADIUS_M * np.cos(np.radians(lat))
        u = alt - alt0
    elif conversion == 'usarsim_flat':
        n, e, u = (
            (lat - lat0) * USARSIM_M_PER_DEG_LAT,
            (lon - lon0) * USARSIM_M_PER_DEG_LON,
            alt - alt0,
        )
    else:
        raise ValueError(
            f'conversion: got {conversion!r}, expected one of {", ".join(CONVERSIONS)}'
        )
    return np.stack([np.asarray(e, float), np.asarray(n, float), np.asarray(u, float)], axis=-1)


def geodetic_to_ecef(lat, lon, alt) -> np.ndarray:
    x, y, z = pymap3d.geodetic2ecef(
        np.asarray(lat, float), np.asarray(lon, float), np.asarray(alt, float)
    )
    return np.stack([np.asarray(x, float), np.asarray(y, float), np.asarray(z, float)], axis=-1)


def enu_rotation(lat_deg, lon_deg) -> np.ndarray:
    """
    Return the ECEF → ENU rotation at (lat, lon).

    ECEF → ENU rotation at (lat, lon): rows are the E, N, U unit vectors in ECEF, shape (..., 3,
    3).
    """
    phi, lam = np.radians(np.asarray(lat_deg, float)), np.radians(np.asarray(lon_deg, float))
    sp, cp, sl, cl = np.sin(phi), np.cos(phi), np.sin(lam), np.cos(lam)
    zero = np.zeros_like(sp)
    return np.stack(
        [
            np.stack([-sl, cl, zero], -1),
            np.stack([-sp * cl, -sp * sl, cp], -1),
            np.stack([cp * cl, cp * sl, sp], -1),
        ],
        -2,
    )

# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
Satellite geometry for the GPS models: orbits, elevation mask, line-of-sight occlusion, DOP.

* Orbits: the nominal 24-slot GPS constellation (GPS SPS Performance Standard, Table 3-1: circular
  orbits, a = 26 559.7 km, i = 55°, epoch 1993-07-01 00:00 UTC, GHA 279.06°, RAAN rate −4.4874e-7
  deg/s), or SGP4 (the ``sgp4`` package) from a user TLE file, as Balaguer & Carpin's USARSim GPS
  did (seed 004).
* Visibility: elevation above a mask (5° by default) and no obstacle on the straight ray to the
  satellite. Obstacles live in the local ENU frame of the datum: axis-aligned boxes or extruded
  polygons (YAML).
* DOP: G rows [−e_E, −e_N, −e_U, 1] over visible satellites, Q = (GᵀWG)⁻¹, HDOP = √(Q11+Q22), ...
  (standard least-squares forms; W = I or sin²(elevation) weights).

Time: a sample time t_s of the truth's time base maps to UTC as ``epoch_utc + t_s``; stamps above
1e9 s are taken as Unix time already (ROS wall-clock stamps), so a live graph on wall time sees
today's sky.
"""

from __future__ import annotations

from dataclasses import dataclass
import datetime as _dt
import math
from pathlib import Path

import numpy as np
from vepd_ros.models.geodesy import enu_rotation, enu_to_geodetic, geodetic_to_ecef

MU_GPS = 3.986005e14  # m³/s², IS-GPS-200
OMEGA_E = 7.2921151467e-5  # rad/s
NOMINAL_A_M = 26_559_700.0
NOMINAL_INCLINATION_DEG = 55.0
NOMINAL_EPOCH = _dt.datetime(1993, 7, 1, tzinfo=_dt.timezone.utc)
NOMINAL_GHA_DEG = 279.06  # 18 h 36 m 14.4 s
NOMINAL_RAAN_RATE_DEG_S = -4.4874e-7
# (plane RAAN deg, [slot argument of latitude u0 deg ×4]) — SPS PS 2001, Table 3-1.
NOMINAL_SLOTS = {
    'A': (272.847, (268.126, 161.786, 11.676, 41.806)),
    'B': (332.847, (80.956, 173.336, 309.976, 204.376)),
    'C': (32.847, (111.876, 11.796, 339.666, 241.556)),
    'D': (92.847, (135.226, 265.446, 35.156, 167.356)),
    'E': (152.847, (197.046, 302.596, 66.066, 333.686)),
    'F': (212.847, (238.886, 345.226, 105.206, 135.346)),
}
UNIX_THRESHOLD_S = 1e9


def parse_utc(text: str) -> _dt.datetime:
    try:
        d = _dt.datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        raise ValueError(
            f"epoch_utc: expected an ISO 8601 time such as '2024-02-07T01:54:02Z', got {text!r}"
        ) from None
    return d if d.tzinfo else d.replace(tzinfo=_dt.timezone.utc)


def unix_times(t_s, epoch_utc: str) -> np.ndarray:
    """
    Return the UTC of sample times as Unix seconds.

    UTC (as Unix seconds) of sample times: epoch + t, or t itself when it already looks like Unix
    time.
    """
    t = np.asarray(t_s, dtype=float)
    return np.where(t > UNIX_THRESHOLD_S, t, parse_utc(epoch_utc).timestamp() + t)


class NominalConstellation:
    """The 24-slot nominal GPS constellation on circular orbits (ECEF positions in metres)."""

    def __init__(self):
        raan, u0 = [], []
        for plane_raan, slots in NOMINAL_SLOTS.values():
            for u in slots:
                raan.append(plane_raan)
                u0.append(u)
        self.raan0 = np.radians(raan)
        self.u0 = np.radians(u0)
        self.names = [f'{p}{k + 1}' for p in NOMINAL_SLOTS for k in range(4)]
        self.n_mean = math.sqrt(MU_GPS / NOMINAL_A_M**3)
        self.epoch_unix = NOMINAL_EPOCH.timestamp()

    def __len__(self):
        return len(self.u0)

    def ecef(self, unix_s) -> np.ndarray:
        """(n, S, 3) ECEF positions at Unix times (n,)."""
        t = np.atleast_1d(np.asarray(unix_s, float)) - self.epoch_unix
        u = self.u0[None, :] + self.n_mean * t[:, None]
        om = self.raan0[None, :] + np.radians(NOMINAL_RAAN_RATE_DEG_S) * t[:, None]
        inc = math.radians(NOMINAL_INCLINATION_DEG)
        cu, su, co, so = np.cos(u), np.sin(u), np.cos(om), np.sin(om)
        x = NOMINAL_A_M * (co * cu - so * su * math.cos(inc))
        y = NOMINAL_A_M * (so * cu + co * su * math.cos(inc))
        z = NOMINAL_A_M * (su * math.sin(inc))
        th = math.radians(NOMINAL_GHA_DEG) + OMEGA_E * t[:, None]
        c, s = np.cos(th), np.sin(th)
        return np.stack([c * x + s * y, -s * x + c * y, z], axis=-1)


def gmst_rad(jd_ut1: np.ndarray) -> np.ndarray:
    """Greenwich mean sidereal time (IAU-82 polynomial) in radians, for TEME → ECEF."""
    tut1 = (jd_ut1 - 2451545.0) / 36525.0
    sec = (
        67310.54841
        + (876600.0 * 3600.0 + 8640184.812866) * tut1
        + 0.093104 * tut1**2
        - 6.2e-6 * tut1**3
    )
    return np.mod(np.radians(sec / 240.0), 2 * np.pi)


class TleConstellation:
    """
    Satellites from a TLE file, propagated with SGP4.

    TEME → ECEF by GMST; polar motion ignored.
    """

    def __init__(self, path: str | Path):
        from sgp4.api import Satrec

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f'tle_file: {path} does not exist')
        lines = [ln.rstrip() for ln in path.read_text().splitlines() if ln.strip()]
        self.sats, self.names = [], []
        i = 0
        while i < len(lines) - 1:
            if lines[i].startswith('1 ') and lines[i + 1].startswith('2 '):
                name = (
                    lines[i - 1].strip()
                    if i > 0 and not lines[i - 1].startswith(('1 ', '2 '))
                    else lines[i][2:7]
                )
                self.sats.append(Satrec.twoline2rv(lines[i], lines[i + 1]))
                self.names.append(name)
                i += 2
            else:
                i += 1
        if not self.sats:
            raise ValueError(f'tle_file: no two-line element sets found in {path}')

    def __len__(self):
        return len(self.sats)

    def ecef(self, unix_s) -> np.ndarray:
        t = np.atleast_1d(np.asarray(unix_s, float))
        jd = t / 86400.0 + 2440587.5
        jd_i = np.floor(jd)
        fr = jd - jd_i
        out = np.empty((len(t), len(self.sats), 3))
        th = gmst_rad(jd)
        c, s = np.cos(th), np.sin(th)
        for k, sat in enumerate(self.sats):
            err, r, _ = sat.sgp4_array(jd_i, fr)
            r = np.asarray(r) * 1000.0
            r[np.asarray(err) != 0] = np.nan
            out[:, k, 0] = c * r[:, 0] + s * r[:, 1]
            out[:, k, 1] = -s * r[:, 0] + c * r[:, 1]
            out[:, k, 2] = r[:, 2]
        return out


# -- obstacles
# ---------------------------------------------------------------------------------------------------
@dataclass
class Box:
    lo: np.ndarray
    hi: np.ndarray

    def hits(self, origin, direction):
        """Origin (n,1,3), direction (n,S,3) → (n,S) bool: the ray s ≥ 0 meets the box."""
        with np.errstate(divide='ignore', invalid='ignore'):
            t1 = (self.lo - origin) / direction
            t2 = (self.hi - origin) / direction
        inside = (origin >= self.lo) & (origin <= self.hi)
        t1 = np.where(direction == 0, np.where(inside, -np.inf, np.inf), t1)
        t2 = np.where(direction == 0, np.where(inside, np.inf, -np.inf), t2)
        tmin = np.max(np.minimum(t1, t2), axis=-1)
        tmax = np.min(np.maximum(t1, t2), axis=-1)
        return tmax >= np.maximum(tmin, 0.0)


@dataclass
class ExtrudedPolygon:
    vertices: np.ndarray  # (m,2) E, N
    z_min: float
    z_max: float
    far_m: float = 10_000.0

    def _inside(self, px, py):
        v = self.vertices
        inside = np.zeros(px.shape, bool)
        for (x1, y1), (x2, y2) in zip(v, np.roll(v, -1, axis=0)):
            cond = (y1 > py) != (y2 > py)
            with np.errstate(divide='ignore', invalid='ignore'):
                xint = (x2 - x1) * (py - y1) / (y2 - y1) + x1
            inside ^= cond & (px < xint)
        return inside

    def hits(self, origin, direction):
        o = np.broadcast_to(origin, direction.shape)
        dz = direction[..., 2]
        with np.errstate(divide='ignore', invalid='ignore'):
            sa, sb = (self.z_min - o[..., 2]) / dz, (self.z_max - o[..., 2]) / dz
        within = (o[..., 2] >= self.z_min) & (o[..., 2] <= self.z_max)
        s0 = np.where(dz == 0, np.where(within, 0.0, np.inf), np.maximum(np.minimum(sa, sb), 0.0))
        s1 = np.where(
            dz == 0,
            np.where(within, self.far_m, -np.inf),
            np.minimum(np.maximum(sa, sb), self.far_m),
        )
        ok = s1 > s0
        s0f, s1f = np.where(ok, s0, 0.0), np.where(ok, s1, 0.0)
        p0 = o[..., :2] + s0f[..., None] * direction[..., :2]
        p1 = o[..., :2] + s1f[..., None] * direction[..., :2]
        hit = self._inside(p0[..., 0], p0[..., 1]) | self._inside(p1[..., 0], p1[..., 1])
        v = self.vertices
        for a, b in zip(v, np.roll(v, -1, axis=0)):
            hit |= _segments_cross(p0, p1, a, b)
        return ok & hit


def _segments_cross(p0, p1, a, b):
    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (
            r[..., 0] - p[..., 0]
        )

    a = np.broadcast_to(a, p0.shape)
    b = np.broadcast_to(b, p0.shape)
    d1, d2 = orient(a, b, p0), orient(a, b, p1)
    d3, d4 = orient(p0, p1, a), orient(p0, p1, b)
    return ((d1 > 0) != (d2 > 0)) & ((d3 > 0) != (d4 > 0)) & (d1 != 0) & (d2 != 0)


def parse_obstacles(spec) -> list:
    """
    Obstacles from a list of dicts (or a YAML file path / YAML text with an ``obstacles:`` list).

    ``{type: box, min: [e, n, u], max: [e, n, u]}`` or ``{type: polygon, vertices: [[e, n], ...],
    z_min, z_max}`` (ENU metres about the datum).
    """
    from vepd_ros.yamlio import load_yaml, parse_yaml

    if isinstance(spec, (str, Path)):
        text = str(spec)
        if not text.strip():
            return []
        p = Path(text)
        data = (
            load_yaml(p, what='obstacles', expect=(dict, list))
            if p.is_file()
            else parse_yaml(text, where='<obstacles text>', what='obstacles', expect=(dict, list))
        )
        if isinstance(data, dict):
            data = data.get('obstacles', [])
        spec = data or []
    out: list[Box | ExtrudedPolygon] = []
    for i, o in enumerate(spec):
        kind = o.get('type', 'box')
        try:
            if kind == 'box':
                lo, hi = np.asarray(o['min'], float), np.asarray(o['max'], float)
                if lo.shape != (3,) or hi.shape != (3,) or np.any(hi < lo):
                    raise ValueError
                out.append(Box(lo, hi))
            elif kind == 'polygon':
                v = np.asarray(o['vertices'], float)
                if v.ndim != 2 or v.shape[1] != 2 or len(v) < 3:
                    raise ValueError
                out.append(ExtrudedPolygon(v, float(o.get('z_min', 0.0)), float(o['z_max'])))
            else:
                raise ValueError
        except (KeyError, ValueError, TypeError):
            raise ValueError(
                f'obstacles[{i}]: expected {{type: box, min: [e,n,u], max: [e,n,u]}} or '
                f'{{type: polygon, vertices: [[e,n],...], z_min, z_max}}, got {o!r}'
            ) from None
    return out


# -- geometry
# ----------------------------------------------------------------------------------------------------
@dataclass
class SkyGeometry:
    elevation: np.ndarray  # (n,S) rad
    azimuth: np.ndarray  # (n,S) rad, from north, clockwise
    los_enu: np.ndarray  # (n,S,3) unit vectors
    above_mask: np.ndarray  # (n,S) bool
    visible: np.ndarray  # (n,S) bool (above mask and not occluded)

    @property
    def n_visible(self) -> np.ndarray:
        return self.visible.sum(axis=1)


def sky_geometry(sats_ecef, rx_enu, datum, mask_deg: float = 5.0, obstacles=()) -> SkyGeometry:
    """
    Return the geometry of satellites seen from receivers.

    Geometry of satellites (n,S,3 ECEF) seen from receivers at ENU positions (n,3) about ``datum``.
    """
    rx_enu = np.atleast_2d(rx_enu)
    lat, lon, alt = enu_to_geodetic(rx_enu, datum)
    rx = geodetic_to_ecef(lat, lon, alt)  # (n,3)
    los = sats_ecef - rx[:, None, :]
    los /= np.linalg.norm(los, axis=-1, keepdims=True)
    r_local = enu_rotation(lat, lon)  # (n,3,3)
    e = np.einsum('nij,nsj->nsi', r_local, los)
    el = np.arcsin(np.clip(e[..., 2], -1, 1))
    az = np.arctan2(e[..., 0], e[..., 1])
    above = (el > np.radians(mask_deg)) & np.isfinite(el)
    visible = above.copy()
    if obstacles:
        r_datum = enu_rotation(datum[0], datum[1])
        d = np.einsum('ij,nsj->nsi', r_datum, los)
        origin = rx_enu[:, None, :]
        for ob in obstacles:
            visible &= ~ob.hits(origin, d)
    return SkyGeometry(el, az, e, above, visible)


def dop_matrix(geom: SkyGeometry, weighting: str = 'equal'):
    """Q = (GᵀWG)⁻¹ (n,4,4) over the visible satellites, NaN where fewer than 4 are visible."""
    e = geom.los_enu
    g = np.concatenate([-e, np.ones(e.shape[:-1] + (1,))], axis=-1)  # (n,S,4)
    w = geom.visible.astype(float)
    if weighting == 'elevation':
        w = w * np.sin(np.clip(geom.elevation, 1e-3, None)) ** 2
    elif weighting != 'equal':
        raise ValueError(f"dop_weighting: got {weighting!r}, expected 'equal' or 'elevation'")
    a = np.einsum('ns,nsi,nsj->nij', w, g, g)
    ok = geom.n_visible >= 4
    q = np.full(a.shape, np.nan)
    if ok.any():
        q[ok] = np.linalg.inv(a[ok])
    return q


def dops(q) -> dict:
    """GDOP, PDOP, HDOP, VDOP, TDOP, EDOP, NDOP from Q (n,4,4)."""
    d = np.diagonal(q, axis1=-2, axis2=-1)
    return {
        'GDOP': np.sqrt(d.sum(-1)),
        'PDOP': np.sqrt(d[..., :3].sum(-1)),
        'HDOP': np.sqrt(d[..., :2].sum(-1)),
        'VDOP': np.sqrt(d[..., 2]),
        'TDOP': np.sqrt(d[..., 3]),
        'EDOP': np.sqrt(d[..., 0]),
        'NDOP': np.sqrt(d[..., 1]),
    }


def make_constellation(tle_file: str = ''):
    return TleConstellation(tle_file) if tle_file else NominalConstellation()

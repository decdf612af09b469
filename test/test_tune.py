# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""`vepd tune` (pipelines.tune): parameter specs, the objective, recovery, kill and resume."""

from __future__ import annotations

import csv
import datetime
import json
import os
from pathlib import Path
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings

import pytest
from vepd_ros.models.spec import split_specs
from vepd_ros.params import ParameterError
from vepd_ros.pipelines import tune as core

REPO = Path(__file__).resolve().parents[1]


def vepd(*args) -> list[str]:
    """Return the `vepd` command from this tree (no reinstall needed)."""
    return [sys.executable, '-m', 'vepd_ros.cli', *args]


# ------------------------------------------------------------------------------------------------
# parameter specs


def test_name_alone_tunes_every_axis_over_the_default_range():
    """A 3-vector by its name alone is one axis; its range is [d/10, 10 d] log around d."""
    (a,) = core.parse_param_specs('gauss_sigma_m', 'ch_gauss')
    assert (a.param, a.index, a.log) == ('gauss_sigma_m', None, True)
    assert a.low == pytest.approx(0.003) and a.high == pytest.approx(0.3)
    assert core.model_params('ch_gauss', [a], {a.name: 0.2}) == {'gauss_sigma_m': [0.2] * 3}


def test_component_and_explicit_range():
    """`name[i]=LOW:HIGH` tunes one component; the others keep the model's default."""
    axes = core.parse_param_specs('gm_sigma_m[2]=0.01:0.5,gm_tau_s=1:100:log', 'gauss_markov')
    assert [(a.name, a.low, a.high, a.log) for a in axes] == [
        ('gm_sigma_m[2]', 0.01, 0.5, False),
        ('gm_tau_s', 1.0, 100.0, True),
    ]
    p = core.model_params('gauss_markov', axes, {'gm_sigma_m[2]': 0.3, 'gm_tau_s': 7.0})
    assert p['gm_sigma_m'][:2] == [0.02, 0.02] and p['gm_sigma_m'][2] == 0.3
    assert p['gm_tau_s'] == 7.0


def test_default_range_is_clipped_to_the_declared_bounds():
    """rw_rate_hz (default 100 Hz, declared <= 1e5) → [10, 1000]; a bound inside is kept."""
    (a,) = core.parse_param_specs('rw_rate_hz', 'ch_rw')
    assert (a.low, a.high) == (10.0, 1000.0)


@pytest.mark.parametrize(
    'spec, needle',
    [
        ('gauss_sigmaa', 'gauss_sigma_m'),  # unknown: the valid names are listed
        ('rw_variant', 'rw_sigma'),  # a choice, not a real value: not tunable
        ('gauss_sigma_m=0.5:0.1', 'non-empty range'),
        ('gauss_sigma_m=0.1:0.1', 'non-empty range'),
        ('gauss_sigma_m=0:1:log', 'LOW > 0'),
        ('gauss_sigma_m=a:b', 'numbers'),
        ('gauss_sigma_m[3]', 'i in 0..2'),
        ('gauss_sigma_m,gauss_sigma_m[0]', 'given once'),
        ('', 'at least one'),
    ],
)
def test_bad_spec_is_a_clear_error(spec, needle):
    model = 'ch_rw' if spec.startswith('rw_') else 'ch_gauss'
    with pytest.raises(ParameterError, match='--params') as e:
        core.parse_param_specs(spec, model)
    assert needle in str(e.value)


def test_range_outside_the_declaration_is_refused():
    """jitter_s is declared <= 10 s: a range up to 20 is an error quoting the declaration."""
    with pytest.raises(ParameterError, match='<= 10'):
        core.parse_param_specs('jitter_s=0:20', 'ch_gauss+latency')


def test_cli_bad_params_exit_2_without_traceback(tmp_path):
    p = subprocess.run(
        vepd('tune', '--model', 'ch_gauss', '--params', 'sigma', '--reference', 'rtk',
             '--out', str(tmp_path / 'o')),
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert 'Traceback' not in p.stderr and 'gauss_sigma_m' in p.stderr
    assert not (tmp_path / 'o').exists()  # nothing written for a bad command


# ------------------------------------------------------------------------------------------------
# the objective


def _objective(sigma_ref_m=0.3, runs=6, duration_s=10.0, seed=3):
    return core.Objective(
        'ch_gauss', 'ch_gauss', ['straight', 'circle'], runs, duration_s, seed=seed,
        reference_params={'gauss_sigma_m': [sigma_ref_m] * 3},
    )


def test_objective_is_deterministic_and_depends_on_the_parameters():
    """Common random numbers: same parameters → same bits; another σ → another VEPD."""
    ob = _objective(runs=2, duration_s=5.0)
    a = ob({'gauss_sigma_m': [0.1] * 3})
    assert a == ob({'gauss_sigma_m': [0.1] * 3})
    assert a != ob({'gauss_sigma_m': [0.2] * 3})


@pytest.mark.slow
def test_recovers_a_known_sigma_from_a_wrong_start():
    """
    Tune ch_gauss against a synthetic ch_gauss reference of known σ = 0.3 m from σ = 0.03 m.

    Tolerance from the objective's resolution: at σ_true the VEPD is its noise floor (two
    independent batches of K = 6 runs of the same model, ≈ 0.07 here) and it rises steeply on both
    sides (≈ 8 VEPD per metre: ≈ 0.5 at σ_true ∓ 0.05 m). The test measures the VEPD at
    σ_true ± 0.05 m and requires the best trial to score below both: on this V-shaped objective
    the best σ then lies within ±0.05 m (17 %), the tolerance asserted. On fresh seeds the tuned
    σ's VEPD must lie within the known σ's bootstrap interval (the confirmation `vepd tune` runs).
    """
    import optuna

    sigma = 0.3
    ob = _objective(sigma)
    axes = core.parse_param_specs('gauss_sigma_m=0.01:1:log', 'ch_gauss')
    study = core.tune(ob, 'ch_gauss', axes, trials=25, storage=optuna.storages.InMemoryStorage(),
                      study_name='rec', seed=0)
    first = min(study.trials, key=lambda t: t.number)
    assert first.params['gauss_sigma_m'] == pytest.approx(0.03)  # the untuned start
    best = core.best_finite(study)
    found = best.params['gauss_sigma_m']
    edges = [ob({'gauss_sigma_m': [s] * 3}) for s in (sigma - 0.05, sigma + 0.05)]
    assert best.value < min(edges), (best.value, edges)
    assert abs(found - sigma) < 0.05, found
    known = ob.evaluate({'gauss_sigma_m': [sigma] * 3}, n_boot=200, seed=4)
    tuned = ob.evaluate({'gauss_sigma_m': [found] * 3}, n_boot=200, seed=4)
    lo, hi = known['ci95']
    assert lo <= tuned['VEPD'] <= hi, (tuned['VEPD'], known['ci95'])


# ------------------------------------------------------------------------------------------------
# IMU models and GPS,IMU pairs


def test_model_resolves_gps_imu_and_pairs():
    """--model: a GPS model, an IMU model, a pair; names say their sensor; bad ones are clear."""
    assert core.resolve_model('ch_rw+airsim') == ('ch_rw+airsim', 'ch_drift_paper', ('gps',))
    assert core.resolve_model('ch_drift', gps='ch_gauss') == ('ch_gauss', 'ch_drift', ('imu',))
    assert core.resolve_model('ch_gauss,allan') == ('ch_gauss', 'allan', ('gps', 'imu'))
    axes = core.parse_param_specs('gauss_sigma_m,gyro_arw=1e-4:1e-2:log', 'ch_gauss,allan')
    assert [(a.name, a.sensor) for a in axes] == [('gauss_sigma_m', 'gps'), ('gyro_arw', 'imu')]
    prm = core.model_params('ch_gauss,allan', axes, {'gauss_sigma_m': 0.1, 'gyro_arw': 1e-3})
    gps, imu = split_specs('ch_gauss', 'allan', prm)
    assert (gps.params, imu.params) == ({'gauss_sigma_m': [0.1] * 3}, {'gyro_arw': 1e-3})
    (a,) = core.parse_param_specs('acc_sigma[2]', 'ch_drift_paper')
    assert (a.sensor, a.index, a.low, a.high) == ('imu', 2, pytest.approx(0.001), 0.1)
    with pytest.raises(ParameterError, match='--model'):
        core.resolve_model('ch_drift,ch_gauss')  # the GPS model first
    with pytest.raises(ParameterError, match='gyro_arw'):  # the IMU's names listed
        core.parse_param_specs('gauss_sigma_m', 'allan')


def _imu_objective(model='ch_drift_paper', judge='builtin'):
    return core.Objective(
        model, 'ch_gauss', ['circle', 'sine'], 6, 10.0, seed=3, gps_model='ch_gauss',
        judge=judge, reference_params={'gauss_sigma_m': [0.03] * 3,
                                       'acc_sigma': [0.3, 0.3, 0.01], 'gyro_sigma': [0.02] * 3},
    )


@pytest.mark.slow
def test_imu_noise_is_not_identifiable_from_vepd_under_the_builtin_judge():
    """
    Tuning an IMU model: its noise parameters move the VEPD less than it can resolve (measured).

    The resolution is the reference's own spread (``reference_floor``: two batches of the reference
    differ by it). Under the built-in judge (config/ekf.yaml, the ART configuration) the
    accelerations reach the filter since issue 23's difference 12 (two_d's az = 0 after gravity
    removal, as ekf_node; before it every acceleration failed the 0.8 σ gate against az = −g and
    acc_sigma changed no bit): the acceleration parameters (and the rate, which steps the drift)
    now move the VEPD by up to ~6 % of the resolution (measured 0.058–0.065); the gyro only turns
    the heading, which the speed the VEPD compares does not see (< 1e-6 of the resolution). So an
    IMU parameter cannot be recovered from VEPD here. The GPS σ of the same pair moves the VEPD by
    many times that resolution: the pair's IMU parameters do reach the simulation (gyro_sigma
    changes bits).
    """
    ob = _imu_objective()
    floor = ob.reference_floor()
    assert floor > 0
    acc = [ob({'acc_sigma': [s, s, 0.01]}) for s in (0.03, 0.3, 3.0)]
    assert len(set(acc)) == 3  # accelerations reach the judge...
    assert max(acc) - min(acc) < 0.2 * floor  # ...inside the resolution (measured 0.058)
    gyro = [ob({'gyro_sigma': [s] * 3}) for s in (0.0, 0.02, 0.2)]
    assert len(set(gyro)) > 1  # the parameter reaches the IMU model...
    assert max(gyro) - min(gyro) < 1e-6 * floor  # ...and the VEPD cannot tell
    # every real-valued parameter of the model, 10 × its default (or 0.01 for a zero one): inside
    # the resolution (the acceleration terms and the rate within 0.2 of it, the gyro within 1e-6)
    base = ob({})
    for name, (_, p) in core.declarations('ch_drift_paper').items():
        scaled = [10 * x or 0.01 for x in p.default] if isinstance(p.default, list) else (
            10 * p.default or 0.01)
        moves_accel = name.startswith('acc') or name == 'update_rate_hz'
        assert abs(ob({name: scaled}) - base) < (0.2 if moves_accel else 1e-6) * floor, name
    pair = core.Objective(
        'ch_gauss,ch_drift_paper', 'ch_gauss', ['circle', 'sine'], 6, 10.0, seed=3,
        reference_params={'gauss_sigma_m': [0.03] * 3})
    gps = [pair({'gauss_sigma_m': [s] * 3}) for s in (0.03, 0.3)]
    assert gps[1] - gps[0] > 10 * floor


@pytest.mark.slow
def test_pair_recovers_the_gps_sigma_with_the_imu_tuned_beside_it():
    """
    Tune the pair ch_gauss,ch_drift_paper (GPS σ and the IMU's acc_sigma) from a wrong start.

    Reference: ch_gauss σ = 0.3 m with ch_drift_paper at known acc_sigma 0.3 m/s². The GPS σ is
    recovered within the tolerance of ``test_recovers_a_known_sigma_from_a_wrong_start`` (the
    best trial scores below the VEPD measured at σ ± 0.05 m, the objective being V-shaped in σ:
    |σ̂ − σ| < 0.05 m); acc_sigma is not identifiable (previous test) and is not asserted. Both
    values reach best_params through ``split_specs`` (one section per sensor in the CLI).
    """
    import optuna

    sigma = 0.3
    ob = core.Objective(
        'ch_gauss,ch_drift_paper', 'ch_gauss', ['straight', 'circle'], 6, 10.0, seed=3,
        reference_params={'gauss_sigma_m': [sigma] * 3, 'acc_sigma': [0.3, 0.3, 0.01]})
    axes = core.parse_param_specs('gauss_sigma_m=0.01:1:log,acc_sigma=0.03:3:log',
                                  'ch_gauss,ch_drift_paper')
    study = core.tune(ob, 'ch_gauss,ch_drift_paper', axes, trials=25,
                      storage=optuna.storages.InMemoryStorage(), study_name='pair', seed=0)
    best = core.best_finite(study)
    found = best.params['gauss_sigma_m']
    edges = [ob({'gauss_sigma_m': [s] * 3}) for s in (sigma - 0.05, sigma + 0.05)]
    assert best.value < min(edges), (best.value, edges)
    assert abs(found - sigma) < 0.05, found
    gps, imu = split_specs('ch_gauss', 'ch_drift_paper', core.model_params(
        'ch_gauss,ch_drift_paper', axes, best.params))
    assert set(gps.params) == {'gauss_sigma_m'} and set(imu.params) == {'acc_sigma'}


def _tune_from_start(ob, model, spec, trials, param, start, edges):
    """
    Tune ``model`` in memory from its untuned start; return the best ``param`` and parameters.

    The first trial is the start (``param`` at ``start``); the best trial scores below both
    ``edges`` (the VEPD at the tolerance's ends of a V-shaped objective).
    """
    import optuna

    axes = core.parse_param_specs(spec, model)
    study = core.tune(ob, model, axes, trials=trials, storage=optuna.storages.InMemoryStorage(),
                      study_name=model, seed=0)
    first = min(study.trials, key=lambda t: t.number)
    assert first.params[param] == pytest.approx(start)
    best = core.best_finite(study)
    assert best.value < min(edges), (best.value, edges)
    return best.params[param], core.model_params(model, axes, best.params)


def _confirm_within_known(ob, known, tuned):
    """Assert: on fresh seeds the tuned point scores within the known point's interval."""
    ref = ob.evaluate(known, n_boot=200, seed=4)
    got = ob.evaluate(tuned, n_boot=200, seed=4)
    assert ref['ci95'][0] <= got['VEPD'] <= ref['ci95'][1], (got['VEPD'], ref['ci95'])


ACC_GATE = 'imu0_linear_acceleration_rejection_threshold'


def _ekf_fusing_accelerations(tmp_path) -> Path:
    """Return config/ekf.yaml without its 0.8-σ gate on the IMU accelerations (a tmp copy)."""
    lines = (REPO / 'config' / 'ekf.yaml').read_text().splitlines(keepends=True)
    kept = [x for x in lines if not x.strip().startswith(ACC_GATE + ':')]
    assert len(kept) == len(lines) - 1  # the gate was there, and only it is gone
    path = tmp_path / 'ekf_fusing_accelerations.yaml'
    path.write_text(''.join(kept))
    return path


@pytest.mark.slow
def test_imu_bias_walk_recovered_under_a_judge_fusing_accelerations(tmp_path):
    """
    Tune ch_drift_paper's accelerometer bias walk against a reference of known acc_drift = 2 m/s².

    The judge: config/ekf.yaml without the acceleration gate (``--ekf-config``), so the IMU's
    accelerations are fused (under the built-in gate no IMU parameter moves the VEPD, above).
    Measured first (reference acc_drift 0.5, then 2; circle and sine, K = 6, 10 s; seed 3):
    acc_drift moves the VEPD by many times the objective's resolution F (the reference's own
    spread, ``reference_floor`` ≈ 0.05 here): V(acc_drift) = 0.167, 0.129, 0.087, 0.058, 0.031,
    0.047, 0.110, 0.325 at 0.5, 1, 1.4, 1.7, 2, 2.4, 2.8, 4: V-shaped about the known value.
    The accelerometer's white noise moves it too (acc_sigma 3 against 0.03 m/s²: 0.168 against
    0.032, asserted), the gyro's σ by < 1e-6 F (the heading, which the compared speed does not
    see; measured with acc_drift 0.1). Tolerance: the VEPD at 0.7 and 1.4 × known exceeds
    V(known) + F (asserted here), so a best trial scoring below both edges of this V has
    acc_drift within [0.7, 1.4] × known. On fresh seeds the tuned point's VEPD lies within the
    known point's bootstrap interval.
    """
    true = 2.0
    ob = core.Objective(
        'ch_drift_paper', 'ch_gauss', ['circle', 'sine'], 6, 10.0, seed=3, gps_model='ch_gauss',
        reference_params={'gauss_sigma_m': [0.03] * 3, 'acc_drift': true},
        ekf_yaml=_ekf_fusing_accelerations(tmp_path))
    floor = ob.reference_floor()
    v_known = ob({'acc_drift': true})
    edges = [ob({'acc_drift': true * f}) for f in (0.7, 1.4)]
    assert min(edges) > v_known + floor, (edges, v_known, floor)
    acc = [ob({'acc_drift': true, 'acc_sigma': [s, s, 0.01]}) for s in (0.03, 3.0)]
    assert acc[1] - acc[0] > floor, (acc, floor)  # acc_sigma reaches the judge here too
    found, tuned = _tune_from_start(ob, 'ch_drift_paper', 'acc_drift=0.1:10:log', 25,
                                    'acc_drift', 0.1, edges)  # the untuned start: 20 × off
    assert 0.7 <= found / true <= 1.4, found
    _confirm_within_known(ob, {'acc_drift': true}, tuned)


@pytest.mark.slow
def test_vepd_study_runs_a_tuned_pair_with_both_sections_of_best_params(tmp_path):
    """
    A tuned GPS,IMU pair's best_params.yaml: vepd study reads its GPS and its IMU section.

    `vepd study --gps-config tuned=FILE --imu-config FILE` against the reference directory the
    tune used, on the tune's fresh seed, scores the label exactly as the tune's confirmation
    scored its best point (same label, seeds and runs: the study ran the tuned GPS σ and gyro
    σ). Without --imu-config the study's IMU is the model's defaults and the VEPD differs: the
    IMU section reached the runs (the gyro σ changes their bits under the built-in judge).
    """
    from vepd_ros.pipelines.study import run_study

    ref = tmp_path / 'ref'
    run_study(['ch_gauss'], ['circle'], 3, duration_s=5.0, reference='rtk', out_dir=ref, seed=5,
              n_boot=0, workers=1)
    tuned = tmp_path / 'tune'
    common = ['--scenarios', 'circle', '--runs', '3', '--duration', '5', '--reference', str(ref)]
    p = subprocess.run(
        vepd('tune', '--model', 'ch_gauss,ch_drift_paper', '--params',
             'gauss_sigma_m=0.05:0.5:log,gyro_sigma=0.01:0.1:log', *common, '--trials', '3',
             '--seed', '7', '--no-landscape', '--quiet', '--out', str(tuned)),
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr
    res = json.loads((tuned / 'result.json').read_text())
    assert 'No objective was given' in (tuned / 'report' / 'report.md').read_text()
    best = tuned / 'best_params.yaml'

    def study(name, *extra):
        q = subprocess.run(
            vepd('study', '--models', 'ch_gauss', '--gps-config', f'{core.TUNED_LABEL}={best}',
                 *extra, *common, '--seed', str(res['confirmation']['seed']), '--n-boot', '0',
                 '--json', '--quiet', '--out', str(tmp_path / name)),
            capture_output=True, text=True, cwd=REPO, timeout=600)
        assert q.returncode == 0, q.stderr
        return json.loads(q.stdout)['models'][core.TUNED_LABEL]['VEPD']

    both = study('both', '--imu-config', str(best))
    assert both == pytest.approx(res['confirmation']['best']['VEPD'], rel=1e-12)
    assert study('gps_only') != both
    q = subprocess.run(vepd('study', '--imu', 'ch_drift', '--imu-config', str(best), *common,
                            '--out', str(tmp_path / 'x')),
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert q.returncode == 2 and '--imu-config' in q.stderr and 'Traceback' not in q.stderr


@pytest.mark.slow
def test_ch_rw_airsim_recovers_tau_and_shows_what_vepd_cannot_see():
    """
    Tune ch_rw+airsim's σ, p_max, H∞ and τ against a seeded ch_rw+airsim reference of known values.

    Known: rw_sigma 0.1 m/s², rw_p_max_m 0.06 m, hdop_final 0.3, hdop_tau_s 1 s; runs of 10 s,
    K = 6, circle and sine. Resolution: the reference's own spread F (``reference_floor``, two
    batches of the reference differ by it, ≈ 0.0015 here); VEPD differences below F cannot be
    told from chance.

    * τ is identifiable: the VEPD at τ·0.8 and τ·1.25 exceeds V(known) + F (measured here; ≈
      0.0085 against 0.0026). The objective is V-shaped in τ (measured: 0.031, 0.022, 0.0086,
      0.0046, 0.0011, 0.0037, 0.0085, 0.026, 0.05 at τ × 1/4 … 4), so a best trial scoring below
      both edges has τ̂ within [0.8 τ, 1.25 τ]: the tolerance asserted.
    * p_max is not used by the chrono variant of the walk (the default, the model's structure):
      the VEPD does not change by one bit over a factor 16.
    * σ and H∞ are not identifiable from these runs: over a factor 16 each (¼ … 4 × known) the
      VEPD moves by less than F (measured); the walk's velocity cap (rw_max_velocity 0.016 m/s)
      bounds what σ can do, and H∞ scales a covariance the differential GPS input barely weighs.
      Their tuned values are not asserted, and docs/tuning.md says so.

    On fresh seeds the tuned point's VEPD lies within the known point's bootstrap interval.
    """
    known = {'rw_sigma': 0.1, 'rw_p_max_m': 0.06, 'hdop_final': 0.3, 'hdop_tau_s': 1.0}
    ob = core.Objective('ch_rw+airsim', 'ch_rw+airsim', ['circle', 'sine'], 6, 10.0, seed=3,
                        reference_params=known)
    floor = ob.reference_floor()
    v_known = ob(known)

    def at(name, factor):
        return ob({**known, name: known[name] * factor})

    edges = [at('hdop_tau_s', 0.8), at('hdop_tau_s', 1.25)]
    assert min(edges) > v_known + floor, (edges, v_known, floor)
    assert at('rw_p_max_m', 0.25) == at('rw_p_max_m', 4.0) == v_known
    for name in ('rw_sigma', 'hdop_final'):
        prof = [at(name, f) for f in (0.25, 1.0, 4.0)]
        assert max(prof) - min(prof) < floor, (name, prof, floor)
    found, tuned = _tune_from_start(
        ob, 'ch_rw+airsim',
        'rw_sigma=0.01:1:log,rw_p_max_m=0.01:1:log,hdop_final=0.05:3:log,hdop_tau_s=0.2:20:log',
        30, 'hdop_tau_s', 12.4, edges)  # the untuned start: 12 × off
    assert 0.8 <= found / known['hdop_tau_s'] <= 1.25, found
    _confirm_within_known(ob, known, tuned)


@pytest.mark.slow
def test_structure_verdict_tells_a_wrong_structure_from_wrong_numbers():
    """
    The verdict: the tuned VEPD's interval on fresh seeds against the reference's own spread.

    ch_gauss against a ch_gauss reference (σ = 0.3 m): at the known σ the interval reaches the
    reference's spread ('within'); at σ = 0.03 m it lies above (wrong numbers, which tuning
    fixes). ch_gauss against a ch_rw+airsim reference (a random walk with an HDOP covariance:
    another structure) lies above at every σ of a grid over 0.03 … 1 m: no numbers fix it.
    """
    ob = _objective(0.3)
    floor = ob.reference_floor()

    def above(objective, sigma, fl):
        e = objective.evaluate({'gauss_sigma_m': [sigma] * 3}, n_boot=1000, seed=4)
        verdict = core.structure_verdict(e, fl)
        assert ('lies above' in verdict['text']) == verdict['above_floor']
        return verdict['above_floor']

    assert not above(ob, 0.3, floor)
    assert above(ob, 0.03, floor)
    other = core.Objective('ch_gauss', 'ch_rw+airsim', ['straight', 'circle'], 6, 10.0, seed=3)
    floor = other.reference_floor()
    assert all(above(other, s, floor) for s in (0.03, 0.1, 0.3, 1.0))
    assert core.structure_verdict({'ci95': None}, floor)['text'].startswith('no verdict')


# ------------------------------------------------------------------------------------------------
# storage: kill and resume


TUNE_ARGS = ['--model', 'ch_gauss', '--params', 'gauss_sigma_m=0.01:1:log', '--reference',
             'gauss_markov', '--scenarios', 'straight', '--runs', '3', '--duration', '10',
             '--quiet', '--no-landscape']


def _complete(storage, name) -> dict:
    import optuna

    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except KeyError:  # not created yet
        return {}
    return {t.number: (t.params, t.value) for t in core.completed(study)}


HEARTBEAT_LAG_S = 0.05
"""Time a trial's heartbeat thread takes to record its first beat (a few SQL statements)."""


def _kill_mid_trial(proc, storage, name, n_complete, timeout_s=300.0):
    """
    SIGKILL ``proc`` inside a trial once the study holds ``n_complete`` COMPLETE trials.

    The process is stopped (SIGSTOP) before its trial is looked up, so the trial seen RUNNING is
    still running when the SIGKILL arrives; only a trial running for a while is taken: its
    heartbeat thread has recorded (Optuna never fails a RUNNING trial without a heartbeat).
    Return the COMPLETE trials at the kill (number → (params, value)) and the number of the trial
    ``proc`` was running (its ``worker`` user attribute names the process).
    """
    import optuna
    from optuna.trial import TrialState
    import sqlalchemy

    t0, me = time.monotonic(), f'{socket.gethostname()}:{proc.pid}'
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise AssertionError(f'worker ended early ({proc.returncode}): {proc.stderr.read()}')
        if len(_complete(storage, name)) >= n_complete:
            proc.send_signal(signal.SIGSTOP)
            try:
                study = optuna.load_study(study_name=name, storage=storage)
                now = datetime.datetime.now()  # Optuna's datetime_start: naive local time
                mine = [t for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
                        if t.user_attrs.get('worker') == me
                        and (now - t.datetime_start).total_seconds() > 3 * HEARTBEAT_LAG_S]
            except (sqlalchemy.exc.OperationalError, optuna.exceptions.StorageInternalError):
                mine = []  # stopped while holding SQLite's write lock: look again later
            if mine:
                proc.send_signal(signal.SIGKILL)
                proc.communicate()  # reaped, its pipes closed
                return _complete(storage, name), mine[0].number
            proc.send_signal(signal.SIGCONT)  # between trials: let it start the next one
        time.sleep(0.02)
    proc.kill()
    proc.communicate()
    raise AssertionError('no progress before the timeout')


@pytest.mark.slow
def test_sqlite_kill_and_resume(tmp_path):
    """
    The only worker is SIGKILLed mid-study; the same command with --study-name finishes it.

    Every trial complete before the kill is kept as it was; the total of COMPLETE trials is the
    target exactly (none counted twice); a trial left RUNNING by the kill ends FAIL (heartbeat).
    """
    import optuna

    out = tmp_path / 'out'
    url = 'sqlite:///' + str(tmp_path / 'trials.db')
    storage = core.make_storage(url)  # the schema made here, not raced by the worker and us
    cmd = vepd('tune', *TUNE_ARGS, '--trials', '16', '--study-name', 's1', '--storage', url,
               '--out', str(out))
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    before, killed = _kill_mid_trial(proc, storage, 's1', 4)
    assert 4 <= len(before) < 16
    time.sleep(2 * core.HEARTBEAT_INTERVAL_S + 1)  # the killed trial's heartbeat goes stale
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    study = optuna.load_study(study_name='s1', storage=storage)
    after = {t.number: (t.params, t.value) for t in core.completed(study)}
    assert len(after) == 16
    assert all(after[n] == before[n] for n in before)
    states = {t.state.name for t in study.trials}
    assert states <= {'COMPLETE', 'FAIL'}  # nothing left RUNNING
    assert study.trials[killed].state.name == 'FAIL'  # by the heartbeat, on the resume
    res = json.loads((out / 'result.json').read_text())
    assert res['trials_complete'] == 16
    with open(out / 'trials.csv') as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r['number']) for r in rows) == sorted(t.number for t in study.trials)
    assert sum(r['state'] == 'COMPLETE' for r in rows) == 16
    best = (out / 'best_params.yaml').read_text()
    assert 'gps_noise_node' in best and 'gauss_sigma_m' in best
    from vepd_ros.params_file import node_section as read_node_params
    from vepd_ros.models.gps import make_gps_model

    prm = read_node_params(out / 'best_params.yaml', 'gps_noise_node')
    make_gps_model(prm.pop('model'), 0, **prm)  # the file is a valid model configuration


# ------------------------------------------------------------------------------------------------
# --workers and --pareto


def _csv(path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_two_workers_finish_the_total_none_counted_twice(tmp_path):
    """
    `--workers 2` on the local SQLite study: 10 COMPLETE trials in all, each once.

    Both processes ran trials (their pids differ in the `worker` column), no trial number or
    parameter point appears twice, nothing is left RUNNING or FAIL, and the count is the target
    exactly (the remaining trials are split between the workers), in the storage as in
    trials.csv and result.json.
    """
    import optuna

    out = tmp_path / 'o'
    p = subprocess.run(vepd('tune', *TUNE_ARGS, '--trials', '10', '--workers', '2', '--out',
                            str(out)), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    study = optuna.load_study(study_name='tune-ch_gauss',
                              storage=core.make_storage(out / 'study.db'))
    assert [t.state.name for t in study.trials] == ['COMPLETE'] * 10
    rows = _csv(out / 'trials.csv')
    assert sorted(int(r['number']) for r in rows) == list(range(10))
    assert len({r['gauss_sigma_m'] for r in rows}) == 10
    workers = {r['worker'] for r in rows}
    assert len(workers) == 2, workers
    res = json.loads((out / 'result.json').read_text())
    assert (res['trials_complete'], res['trials_this_run'], res['workers']) == (10, 10, 2)


@pytest.mark.slow
def test_pareto_front_and_the_chosen_point(tmp_path):
    """
    `--pareto`: W1 and W2 are two objectives; the front is the non-dominated COMPLETE trials.

    result.json's front equals the non-dominated set computed here from trials.csv's W1 and W2
    (and its `pareto` column); best_params.yaml holds the front's point with the least VEPD
    ((W1 + W2) / 2) and its header says it was chosen so.
    """
    out = tmp_path / 'o'
    p = subprocess.run(vepd('tune', *TUNE_ARGS, '--trials', '8', '--pareto', '--out', str(out)),
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    rows = [r for r in _csv(out / 'trials.csv') if r['state'] == 'COMPLETE']
    pts = {int(r['number']): (float(r['w1']), float(r['w2'])) for r in rows}

    def dominated(a):
        return any(b[0] <= a[0] and b[1] <= a[1] and b != a for b in pts.values())

    front = sorted(n for n, a in pts.items() if not dominated(a))
    assert front == sorted(int(r['number']) for r in rows if r['pareto'] == '1')
    res = json.loads((out / 'result.json').read_text())
    assert [e['number'] for e in res['pareto_front']] == front
    chosen = min(res['pareto_front'], key=lambda e: (e['VEPD'], e['number']))
    assert chosen['VEPD'] == pytest.approx((chosen['W1'] + chosen['W2']) / 2, rel=1e-12)
    assert res['best']['number'] == chosen['number']
    head = (out / 'best_params.yaml').read_text()
    assert "Pareto front's point with the least VEPD" in head
    assert repr(chosen['params']['gauss_sigma_m'][0]) in head or str(
        chosen['params']['gauss_sigma_m'][0]) in head
    page = (out / 'report' / 'report.md').read_text()
    assert f'**Pareto front** — the {len(front)} trials' in page
    assert "the chosen point is the Pareto front's point with the least VEPD" in page
    # the same study continued without --pareto is refused, OUT left as it was
    p = subprocess.run(vepd('tune', *TUNE_ARGS, '--trials', '9', '--out', str(out)),
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and '--pareto' in p.stderr and 'Traceback' not in p.stderr
    assert json.loads((out / 'result.json').read_text()) == res


# ------------------------------------------------------------------------------------------------
# PostgreSQL: two workers on one study, one killed


def _initdb() -> Path | None:
    for p in sorted(Path('/usr/lib/postgresql').glob('*/bin/initdb'), reverse=True):
        return p
    found = shutil.which('initdb')
    return Path(found) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres(tmp_path):
    """
    Start a PostgreSQL server in a temporary directory on a loopback port; yield its URL.

    PostgreSQL refuses to run as root: as root (CI containers) the server runs as the ``postgres``
    user Debian's package creates.
    """
    initdb = _initdb()
    if initdb is None:
        pytest.skip('PostgreSQL server (initdb) not installed: apt-get install postgresql')
    pytest.importorskip('psycopg', reason='psycopg (requirements-dev.txt) not installed')
    as_user: list[str] = []
    pg = tmp_path / 'pg'
    pg.mkdir()
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam('postgres')
        except KeyError:
            pytest.skip('running as root and no postgres user to run the server as')
        as_user = ['runuser', '-u', 'postgres', '--']
        os.chown(pg, user.pw_uid, user.pw_gid)
        for d in (tmp_path, *tmp_path.parents):  # the server must reach its directory
            if d == Path('/'):
                break
            os.chmod(d, os.stat(d).st_mode | 0o001)
    bindir = initdb.parent
    data, sock, log = pg / 'data', pg / 'sock', pg / 'pg.log'
    subprocess.run([*as_user, str(initdb), '-D', str(data), '-U', 'vepd', '--auth=trust',
                    '-E', 'UTF8'], check=True, capture_output=True, timeout=120)
    subprocess.run([*as_user, 'mkdir', str(sock)], check=True, timeout=30)
    port = _free_port()
    subprocess.run(
        [*as_user, str(bindir / 'pg_ctl'), '-D', str(data), '-l', str(log), '-w', '-o',
         f'-p {port} -c listen_addresses=127.0.0.1 -k {sock}', 'start'],
        check=True, capture_output=True, timeout=120,
    )
    try:
        subprocess.run([str(bindir / 'createdb'), '-h', '127.0.0.1', '-p', str(port), '-U',
                        'vepd', 'tune'], check=True, capture_output=True, timeout=60)
        yield f'postgresql://vepd@127.0.0.1:{port}/tune'
    finally:
        subprocess.run([*as_user, str(bindir / 'pg_ctl'), '-D', str(data), '-m', 'immediate',
                        'stop'], capture_output=True, timeout=120)


@pytest.mark.slow
def test_postgresql_two_workers_one_killed(postgres, tmp_path):
    """
    Two workers share one study through PostgreSQL; one is SIGKILLed mid-study.

    The other finishes it: every trial complete before the kill is kept, the killed worker's
    trial in flight ends FAIL by the heartbeat, and the study holds the target of COMPLETE trials
    (a trial in flight in the other worker when the total is reached may add one: at most 1 over).
    """
    import optuna

    def worker(i):
        return subprocess.Popen(
            vepd('tune', *TUNE_ARGS, '--trials', '16', '--storage', postgres, '--study-name',
                 'pg', '--sampler-seed', str(i), '--out', str(tmp_path / f'w{i}')),
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    storage = core.make_storage(postgres)  # one engine for the test's own looks (and the schema)
    try:
        w0 = worker(0)
        # the first worker creates the study; the second joins it (load_if_exists)
        t0 = time.monotonic()
        while not _complete(storage, 'pg') and time.monotonic() - t0 < 300:
            time.sleep(0.2)
        w1 = worker(1)
        before, killed = _kill_mid_trial(w1, storage, 'pg', 6)
        out, err = w0.communicate(timeout=600)
        assert w0.returncode == 0, err
        # the survivor may finish before the killed trial's heartbeat is stale: any worker that
        # looks later fails it, as this one does
        time.sleep(2 * core.HEARTBEAT_INTERVAL_S + 1)
        study = optuna.load_study(study_name='pg', storage=storage)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
            optuna.storages.fail_stale_trials(study)
        done = {t.number: (t.params, t.value) for t in core.completed(study)}
        assert 16 <= len(done) <= 17
        assert all(done[n] == before[n] for n in before)
        assert {t.state.name for t in study.trials} <= {'COMPLETE', 'FAIL'}
        assert study.trials[killed].state.name == 'FAIL'
    finally:
        storage.engine.dispose()


def test_cli_confirms_the_known_parameters_of_a_simulated_reference(tmp_path):
    """
    A reference simulated from the tuned model: result.json confirms its known parameters too.

    `--reference ch_gauss` for `--model ch_gauss` is the model at its defaults: the known row is
    scored on the fresh seeds (the same bits as the untuned start, which is those defaults) and
    shown on the page; against another model there is no known row.
    """
    args = ['--model', 'ch_gauss', '--params', 'gauss_sigma_m=0.01:1:log', '--scenarios',
            'straight', '--runs', '2', '--duration', '3', '--trials', '2', '--quiet',
            '--no-landscape']
    for ref in ('ch_gauss', 'rtk'):
        p = subprocess.run(vepd('tune', *args, '--reference', ref, '--out', str(tmp_path / ref)),
                           capture_output=True, text=True, cwd=REPO, timeout=300)
        assert p.returncode == 0, p.stderr
        assert f'report: {tmp_path / ref / "report" / "report.html"}' in p.stderr
    conf = json.loads((tmp_path / 'ch_gauss' / 'result.json').read_text())['confirmation']
    assert conf['known']['VEPD'] == conf['start']['VEPD']
    assert '| known parameters (the reference) |' in (
        tmp_path / 'ch_gauss' / 'report' / 'report.md').read_text()
    assert 'known' not in json.loads((tmp_path / 'rtk' / 'result.json').read_text())[
        'confirmation']


def test_cli_cmaes_sampler_runs_seeded(tmp_path):
    """
    `--sampler cmaes` (CMA-ES over two continuous parameters) gives a real, seeded result.

    Optuna's CmaEsSampler needs the `cmaes` package (requirements-pip-only.txt): without it the
    command ended in an ImportError traceback. Two runs with the same --seed ask for the same
    parameters, in the same order, and score them alike.
    """
    args = ['--model', 'ch_rw', '--params', 'rw_sigma=0.005:0.05:log,rw_max_velocity=0.01:0.1',
            '--scenarios', 'straight', '--runs', '2', '--duration', '2', '--trials', '4',
            '--sampler', 'cmaes', '--reference', 'rtk', '--seed', '3', '--quiet', '--no-landscape']
    rows = []
    for name in ('a', 'b'):
        p = subprocess.run(vepd('tune', *args, '--out', str(tmp_path / name)),
                           capture_output=True, text=True, cwd=REPO, timeout=300)
        assert p.returncode == 0, p.stderr
        assert 'Traceback' not in p.stderr
        rows.append([(r['rw_sigma'], r['rw_max_velocity'], r['vepd'])
                     for r in _csv(tmp_path / name / 'trials.csv') if r['state'] == 'COMPLETE'])
    assert len(rows[0]) == 4 and rows[0] == rows[1]
    assert len({r[:2] for r in rows[0]}) == 4  # four distinct points were asked


def test_cli_refuses_a_foreign_output_dir(tmp_path):
    """OUT holding anything but a previous tune output is refused (exit 2) and left as it was."""
    out = tmp_path / 'o'
    out.mkdir()
    (out / 'mine.txt').write_text('keep')
    p = subprocess.run(
        vepd('tune', '--model', 'ch_gauss', '--params', 'gauss_sigma_m', '--reference', 'rtk',
             '--scenarios', 'straight', '--runs', '2', '--duration', '2', '--trials', '1',
             '--out', str(out)),
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )
    assert p.returncode == 2 and 'Traceback' not in p.stderr, p.stderr
    assert sorted(x.name for x in out.iterdir()) == ['mine.txt']


def test_reference_directory_scored_on_the_requested_scenarios(tmp_path):
    """
    A reference directory is read once; a requested scenario it lacks is a clear error.

    The objective against a directory of runs equals the objective against the same runs
    simulated in memory (same model, seed and label): reading the files changes nothing.
    """
    from vepd_ros.pipelines.study import run_study

    run_study(['ch_gauss'], ['straight'], 2, duration_s=3.0, reference='rtk',
              out_dir=tmp_path / 'ref', seed=5, n_boot=0,
              workers=1)
    ob_dir = core.Objective('ch_gauss', str(tmp_path / 'ref'), ['straight'], 2, 3.0, seed=5)
    ob_sim = core.Objective('ch_gauss', 'rtk', ['straight'], 2, 3.0, seed=5)
    prm = {'gauss_sigma_m': [0.1] * 3}
    assert ob_dir(prm) == pytest.approx(ob_sim(prm), rel=1e-9)
    with pytest.raises(ValueError, match='circle'):
        core.Objective('ch_gauss', str(tmp_path / 'ref'), ['straight', 'circle'], 2, 3.0)
    # 2 reference runs where a trial plans K = 3: scored, and flagged on the trial
    import optuna

    ob3 = core.Objective('ch_gauss', str(tmp_path / 'ref'), ['straight'], 3, 3.0, seed=5)
    axes = core.parse_param_specs('gauss_sigma_m', 'ch_gauss')
    study = core.tune(ob3, 'ch_gauss', axes, trials=1, storage=optuna.storages.InMemoryStorage(),
                      study_name='k', seed=0)
    (t,) = study.trials
    assert any('fewer than K = 3' in w for w in t.user_attrs['warnings']), t.user_attrs
    header, rows = core.trials_rows(study, axes)
    assert rows[0][header.index('warnings')] == len(t.user_attrs['warnings'])


@pytest.mark.parametrize(
    'url', ['foo://x', 'postgresql://u:secret@127.0.0.1:1/db', '/no/dir/x.db']
)
def test_cli_bad_storage_exit_2_before_out_is_touched(url, tmp_path):
    """A storage that cannot be opened: one clear line (no password), exit 2, no OUT made."""
    p = subprocess.run(
        vepd('tune', '--model', 'ch_gauss', '--params', 'gauss_sigma_m', '--reference', 'rtk',
             '--scenarios', 'straight', '--runs', '2', '--duration', '2', '--storage', url,
             '--out', str(tmp_path / 'o')),
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )
    assert p.returncode == 2 and 'Traceback' not in p.stderr, p.stderr
    assert '--storage' in p.stderr and 'secret' not in p.stderr
    assert not (tmp_path / 'o').exists()

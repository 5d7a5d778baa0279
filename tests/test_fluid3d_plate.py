"""The "3D Boundaries" scene (Treuille thesis Fig. 3.9) at CI size: a flat
plate moved through a rising updraft, its boundary basis, the surface energy
removed on the fly and with tables 1, 2, 4 voxels apart, smoke entering the
plate, the error against the full solver by basis size, a plate with an
aperture it was not trained on, and the per-step split of Table 3.2."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from directable import fluid as F
from directable.experiments import fluid_3d as E
from reference.threads import one_thread

N = 16  # cells per side at CI (the CI size is 32^3, the paper's 64^3: E.plate_scene(n=...))


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    # the CI-size scene's steps are too small for a team; on shared cores teams stall (reference.threads.one_thread)
    with one_thread():
        yield


@pytest.fixture(scope="module")
def scene():
    return E.plate_scene(n=N, r=16, p=24, steps=24)


def test_scene_is_trained(scene):
    bb = scene.boundary
    assert len(scene.paths) == 3 and bb.p >= 8 and bb.rigid_fields.shape[1] == 6
    assert scene.reduced.divergence_error < 1e-8
    np.testing.assert_allclose(bb.surface_speeds.T @ bb.surface_speeds, np.eye(bb.p), atol=1e-10)
    assert set(scene.seconds) == {"full_runs", "basis", "boundary"}
    assert bb.samples == scene.samples == "faces+surface"  # the inside moves rigidly, the surface lets no flow through


def test_surface_energy_removed_on_the_fly_and_tabulated(scene):
    rm = E.plate_removal(scene, spacings=(1, 2, 4))
    assert rm["exact"] >= 0.95  # on the fly, at training poses
    assert rm[1] >= 0.90  # tables one voxel apart
    # Fig. 3.11b: coarser tables remove less (at this CI size 2 and 4 voxels are not ordered: measured 87.8 / 93.1 %)
    assert rm[1] > rm[2] and rm[1] > rm[4]
    assert rm["bytes_4"] <= rm["bytes_2"] <= rm["bytes_1"]


def test_smoke_entering_the_plate(scene):
    # the 2D scene's metric on the surface: inflow through it per step, by a midpoint rule h/8 fine, with the
    # scene's boundary fields (the plate's inside and its surface samples) <= 10 % of the inflow without them
    # (measured 6.6 % at 16^3). Fields held on every face the full solver closes let flow through the true
    # surface within half a cell of its edges, where trilinear interpolation reads open faces (measured 15.4 %;
    # the full solver's own field 27 %): the reason the scene samples the surface
    assert scene.samples == "faces+surface"
    without = E.plate_smoke_entering(scene, boundary=False)
    with_scene = E.plate_smoke_entering(scene, boundary=True)
    assert 0 < with_scene <= 0.10 * without
    faces = dataclasses.replace(scene, samples="faces", boundary=E._plate_boundary(
        scene.reduced, scene.plate, scene.train_poses(), scene.boundary.p, "faces", scene.margin))
    assert with_scene < E.plate_smoke_entering(faces, boundary=True) <= 0.20 * without


def test_surface_quadrature_integrates_the_plate():
    plate = F.plate(0.4, 0.3, 0.05, aperture=(0.1, 0.1))
    pts, nrm, area = E.surface_quadrature(plate, 0.02)
    want = 2 * (0.4 * 0.3 - 0.1 * 0.1) + 0.05 * 2 * (0.4 + 0.3 + 0.1 + 0.1)
    np.testing.assert_allclose(area.sum(), want, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(nrm, axis=1), 1.0, atol=1e-12)
    # the divergence theorem: the outward flux of x through the closed surface is the volume
    np.testing.assert_allclose(np.sum(area * np.sum(pts * nrm, axis=1)) / 3, plate.volume, rtol=1e-12)


@pytest.fixture(scope="module")
def curves(scene):
    # Fig. 3.10a at 16^3 along path 1: reduced runs with the scene's boundary fields (a local box 8 cells beyond
    # the plate), and full runs at 8^3 and 12^3 sampled on the 16^3 faces
    return E.plate_error_curves(scene, rs=(4, 6, 12), sizes=(8, 12), run=1)


def test_error_against_the_full_run_by_basis_size(scene, curves):
    # the basis itself improves with r (projection error); with the scene's boundary fields (inside and surface)
    # the reduced run's error falls with r too (measured 0.493 / 0.344 / 0.331 for r = 4 / 6 / 12); with every
    # closed face held it is lower (0.377 / 0.130 / 0.120) but flow crosses the surface (test_smoke_entering...);
    # with surface samples alone it does not fall (0.54 / 0.44 / 0.44 for r = 4 / 8 / 16; plate_basis_error's notes)
    proj = E.plate_projection_error(scene, rs=(4, 8, 16), run=1)
    assert proj[16] < 0.5 * proj[8] < 0.25 * proj[4]
    err = {r: curves["mean"][("r", r)] for r in (4, 6, 12)}
    assert err[4] > err[6] > err[12] and err[12] < 0.4


def test_fig_3_10a_downsampled_full_runs(scene, curves):
    # the 2D scene's Fig. 3.10a in 3D: coarser full runs of the same path and updraft (measured 0.58 / 0.26 at
    # 8^3 / 12^3): the 3/4-resolution run is closer than every reduced run here (r = 4 / 6 / 12: 0.49 / 0.34 /
    # 0.33; the paper's 96^2 matched about 32 of 64 bases), the 1/2-resolution run farther than all
    T = len(scene.paths[1][0])
    assert set(curves["reduced"]) == {4, 6, 12} and set(curves["downsampled"]) == {8, 12}
    assert all(e.shape == (T,) for e in [*curves["reduced"].values(), *curves["downsampled"].values()])
    m = curves["mean"]
    assert m[("n", 12)] < m[("n", 8)]
    assert m[("n", 12)] < m[("r", 12)] < m[("r", 4)] < m[("n", 8)]


def test_fig_3_10b_trained_at_0_and_90_degrees():
    # trained with gusts from below (0) and from the side (90): the gust at 45 degrees is the worst
    # (16^3, 12 steps, measured 0.15 / 0.56 / 0.18; with surface samples 0.72 / 0.91 / 0.72)
    wa = E.plate_wind_angles(n=16, r=16, p=24, angles=(0, 45, 90), steps=12)
    assert wa["curves"].shape == (3, 12) and wa["train_angles"] == [0.0, 90.0]
    assert wa["error"][1] > max(wa["error"][0], wa["error"][2])


def test_untrained_aperture_plate(scene):
    rm = E.plate_untrained(scene)
    assert rm["plate"] >= 0.95 and rm["aperture"] >= 0.9


def test_timings_split(scene):
    t = E.plate_timings(scene, particles=500, steps=5)
    assert set(t) >= {"vels", "bound", "media", "total", "full", "speedup"}
    assert t["total"] > 0 and t["full"] > 0

"""Files: every saved kind round-trips, and a corrupted-file corpus
(truncated, random bytes, edited fields, foreign files, pickles) is answered
by ValueError naming the file and the field, never KeyError/AttributeError,
never a silently different object."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import directable as dr
from directable import lqr


def _objects(rng):
    A = rng.standard_normal((4, 3, 3)) * 0.5
    B = rng.standard_normal((4, 3, 2))
    sol = lqr.solve_discrete(A, B, 1.0, 0.3, 2.0)
    disc = lqr.discretize(A, B, 0.05, 1.0, 1.0)
    z_ref = rng.standard_normal((5, 3))
    tr = lqr.tracker(sol, z_ref, rng.standard_normal((4, 2)), loop=True, w_min=-1.0, w_max=2.0)
    tr8 = lqr.tracker(sol, z_ref, gain_dtype="int8")
    return {"LQRSolution": sol, "Discretization": disc, "Tracker": tr, "Tracker int8": tr8, "arrays": None}


def _fields(obj):
    names = {lqr.LQRSolution: ("K", "P"), lqr.Discretization: ("Phi", "Gamma", "Q", "N", "R", "Rc", "dt"),
             lqr.Tracker: ("K", "z_ref", "w_ff", "loop", "w_min", "w_max", "gain_dtype")}
    return names.get(type(obj), ())


@pytest.mark.parametrize("kind", ["LQRSolution", "Discretization", "Tracker", "Tracker int8", "arrays"])
def test_every_kind_round_trips(rng, tmp_path, kind):
    obj = _objects(rng)[kind]
    path = tmp_path / "obj.npz"
    dr.save(path, obj, extra=np.arange(3))
    back, extra = dr.load(path)
    np.testing.assert_array_equal(extra["extra"], np.arange(3))
    for f in _fields(obj):
        a, b = getattr(obj, f), getattr(back, f)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f)
        else:
            assert a == b, f
    if kind == "Discretization":
        assert back.method == obj.method


def _edit(src, dst, **changes):
    """Copy the .npz src to dst with fields replaced (None: removed)."""
    with np.load(src, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    np.savez(dst, **data)


_EDITS = {
    # kind, field -> replacement, text the message must contain
    "unknown kind": ("Tracker", {"__directable_kind__": np.str_("Evil")}, "__directable_kind__"),
    "kind as number": ("Tracker", {"__directable_kind__": np.float64(1.0)}, "__directable_kind__"),
    "kind as array": ("Tracker", {"__directable_kind__": np.array(["Tracker", "Tracker"])}, "__directable_kind__"),
    "unknown method": ("Discretization", {"method": np.str_("Exact")}, "method"),
    "method as number": ("Discretization", {"method": np.int64(0)}, "method"),
    "missing field": ("Discretization", {"Gamma": None}, "Gamma"),
    "missing K": ("LQRSolution", {"K": None}, "K"),
    "loop as string": ("Tracker", {"loop": np.str_("False")}, "loop"),
    "loop as number": ("Tracker", {"loop": np.int64(0)}, "loop"),
    "gain_dtype unknown": ("Tracker", {"gain_dtype": np.str_("float13")}, "gain_dtype"),
    "gain_dtype as number": ("Tracker", {"gain_dtype": np.float64(8)}, "gain_dtype"),
    "dt NaN": ("Discretization", {"dt": np.float64(np.nan)}, "dt"),
    "dt as array": ("Discretization", {"dt": np.ones(3)}, "dt"),
    "dt as string": ("Discretization", {"dt": np.str_("0.1")}, "dt"),
    "K as strings": ("LQRSolution", {"K": np.array([["a"]])}, "K"),
    "K complex": ("LQRSolution", {"K": np.zeros((4, 2, 3), complex)}, "K"),
    "K wrong shape": ("LQRSolution", {"K": np.zeros((4, 2, 5))}, "K"),
    "K NaN": ("Tracker", {"K": np.full((4, 2, 3), np.nan)}, "K"),
    "P wrong length": ("LQRSolution", {"P": np.zeros((2, 3, 3))}, "P"),
    "z_ref wrong width": ("Tracker", {"z_ref": np.zeros((5, 4))}, "(z_ref|K) must have shape"),
    "w_min wrong length": ("Tracker", {"w_min": np.zeros(7)}, "w_min"),
    "w_max as bools": ("Tracker", {"w_max": np.array(["x", "y"])}, "w_max"),
    "Phi 2-D": ("Discretization", {"Phi": np.zeros((3, 3))}, "Phi"),
}


@pytest.mark.parametrize("case", list(_EDITS))
def test_edited_fields_are_named(rng, tmp_path, case):
    kind, changes, word = _EDITS[case]
    src, dst = tmp_path / "src.npz", tmp_path / "dst.npz"
    dr.save(src, _objects(rng)[kind])
    _edit(src, dst, **changes)
    with pytest.raises(ValueError, match=word) as info:
        dr.load(dst)
    assert "dst.npz" in str(info.value)


def _corpus(tmp_path, rng):
    good = tmp_path / "good.npz"
    dr.save(good, _objects(rng)["Tracker"], z=np.arange(4))
    raw = good.read_bytes()
    files = {
        "empty": b"",
        "random bytes": rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(),
        "text": b"K,P\n1,2\n",
        "truncated half": raw[: len(raw) // 2],
        "truncated tail": raw[:-20],
        "zip header only": raw[:30],
    }
    flipped = bytearray(raw)
    for i in rng.integers(100, len(raw) - 100, 40):
        flipped[i] ^= 0xFF
    files["flipped bytes"] = bytes(flipped)
    buf = io.BytesIO()
    np.save(buf, np.arange(3))
    files["a bare .npy"] = buf.getvalue()
    buf = io.BytesIO()
    np.savez(buf, K=np.array([{"a": 1}], dtype=object))  # a pickle inside: refused
    files["pickled object"] = buf.getvalue()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("K.npy", b"not an npy")
    files["zip of junk"] = buf.getvalue()
    return files


def test_corrupted_file_corpus(rng, tmp_path):
    for name, content in _corpus(tmp_path, rng).items():
        path = tmp_path / f"bad_{name.replace(' ', '_')}.npz"
        path.write_bytes(content)
        try:
            dr.load(path)
        except ValueError as e:
            assert path.name in str(e), (name, e)
        else:
            if name != "flipped bytes":  # a flip may land in slack bytes: then the object must still be valid
                pytest.fail(f"{name}: loaded without error")


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        dr.load(tmp_path / "nope.npz")

"""zfp and sz3 objects the reference wrote on dtypes other than float64
(spec 03 §3.3): the module returns the reference decoder's bytes (the xxh3
its decoder gave, fixtures/tgm-reference-lossy/expected.json), flat where
they do not fill the shape, with a UserWarning that the values were lossily
compressed as reinterpreted float64."""

import json
import warnings

import numpy as np
import pytest

import tensogram


def _cases(fixtures_dir):
    expected = json.loads((fixtures_dir / "tgm-reference-lossy" / "expected.json").read_text())
    for entry in expected:
        yield entry["file"], entry["objects"][0]


def test_decode_returns_the_reference_decoders_bytes(fixtures_dir):
    seen = 0
    for name, want in _cases(fixtures_dir):
        buf = (fixtures_dir / "tgm-reference-lossy" / name).read_bytes()
        dtype = want["descriptor"]["dtype"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            msg = tensogram.decode(buf)
        arr = msg.objects[0][1]
        assert tensogram.compute_hash(np.ascontiguousarray(arr).tobytes()) == want["decoded_xxh3"], name
        reinterpreted = [w for w in caught if "reinterpreted float64" in str(w.message)]
        if dtype == "float64":
            assert not reinterpreted, name
        else:
            assert len(reinterpreted) == 1 and reinterpreted[0].category is UserWarning, name
            assert reinterpreted[0].filename == __file__  # stacklevel 1: the caller's line
        shape = tuple(want["descriptor"]["shape"])
        if want["descriptor"]["compression"] == "zfp" and dtype != "float64":
            # zfp decodes 8·N bytes whatever the dtype: flat, in the dtype.
            assert arr.ndim == 1 and arr.nbytes == 8 * int(np.prod(shape)), name
        else:
            assert arr.shape == shape, name
        seen += 1
    assert seen == 6


def test_ranges_are_slices_of_the_full_decode(fixtures_dir):
    for name, want in _cases(fixtures_dir):
        buf = (fixtures_dir / "tgm-reference-lossy" / name).read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = np.ascontiguousarray(tensogram.decode(buf).objects[0][1]).tobytes()
            part = tensogram.decode_range(buf, 0, [(3, 10)], join=True)
        width = part.dtype.itemsize
        assert part.tobytes() == full[3 * width : 13 * width], name


def test_warnings_as_errors_raise(fixtures_dir):
    buf = (fixtures_dir / "tgm-reference-lossy" / "int16__zfp_acc1e-3.tgm").read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="reinterpreted float64"):
            tensogram.decode(buf)

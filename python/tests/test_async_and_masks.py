"""AsyncTensogramFile and decode_with_masks (spec 04 B.5, B.6)."""

import asyncio

import numpy as np
import pytest

import tensogram


@pytest.fixture
def file_path(tmp_path):
    path = tmp_path / "a.tgm"
    with tensogram.TensogramFile.create(path) as f:
        for i in range(6):
            f.append({"base": [{"step": i}]}, [({"type": "ntensor", "shape": [50], "dtype": "float64"},
                                                np.arange(50.0) + i)])  # fmt: skip
    return path


def test_async_file_reads_like_the_sync_file(file_path):
    async def main():
        f = await tensogram.AsyncTensogramFile.open(file_path)
        with pytest.raises(RuntimeError, match="message_count"):
            len(f)
        assert await f.message_count() == 6 and len(f) == 6
        assert not f.is_remote() and f.source() == str(file_path)
        # concurrent awaits on one handle
        messages = await asyncio.gather(*(f.decode_message(i) for i in range(6)))
        objs = await asyncio.gather(*(f.file_decode_object(i, 0) for i in range(6)))
        ranges = await f.file_decode_range(3, 0, [(10, 5)], join=True)
        meta = await f.file_decode_metadata(2)
        raw = await f.read_message(1)
        await f.prefetch_layouts(range(6))
        seen = []
        async with f:
            async for m in f:
                seen.append(m.metadata["step"])
        with pytest.raises(OSError):
            await f.file_decode_object_batch([0, 1], 0)
        return messages, objs, ranges, meta, raw, seen

    messages, objs, ranges, meta, raw, seen = asyncio.run(main())
    for i, (m, o) in enumerate(zip(messages, objs)):
        np.testing.assert_array_equal(m.objects[0][1], np.arange(50.0) + i)
        np.testing.assert_array_equal(o["data"], np.arange(50.0) + i)
    np.testing.assert_array_equal(ranges, np.arange(10.0, 15.0) + 3)
    assert meta["step"] == 2
    assert tensogram.decode(raw).metadata["step"] == 1
    assert seen == list(range(6))


def test_decode_with_masks_gives_stored_zeros_and_per_element_flags():
    values = np.linspace(1.0, 2.0, 20)
    values[[0, 7, 19]] = np.nan
    values[3] = np.inf
    values[4] = -np.inf
    plain = np.linspace(0.0, 1.0, 5)
    msg = tensogram.encode(
        {},
        [({"type": "ntensor", "shape": [4, 5], "dtype": "float64", "compression": "zstd"}, values.reshape(4, 5)),
         ({"type": "ntensor", "shape": [5], "dtype": "float64"}, plain)],
        allow_nan=True, allow_inf=True,
    )  # fmt: skip
    meta, objects = tensogram.decode_with_masks(msg)
    (d0, a0, m0), (d1, a1, m1) = objects
    assert sorted(m0) == ["inf+", "inf-", "nan"] and m1 == {}
    for kind, where in (("nan", [0, 7, 19]), ("inf+", [3]), ("inf-", [4])):
        assert m0[kind].dtype == np.bool_ and m0[kind].shape == (20,)
        assert np.flatnonzero(m0[kind]).tolist() == where
    stored = a0.ravel()
    assert np.isfinite(stored).all() and stored[[0, 3, 4, 7, 19]].tolist() == [0.0] * 5
    finite = ~(m0["nan"] | m0["inf+"] | m0["inf-"])
    np.testing.assert_array_equal(stored[finite], values[finite])
    np.testing.assert_array_equal(a1, plain)
    # the same masks rebuild what decode() restores
    rebuilt = stored.copy()
    rebuilt[m0["nan"]] = np.nan
    rebuilt[m0["inf+"]] = np.inf
    rebuilt[m0["inf-"]] = -np.inf
    np.testing.assert_array_equal(rebuilt, tensogram.decode(msg).objects[0][1].ravel())


def test_unknown_mask_method_is_a_value_error_with_the_reference_text():
    with pytest.raises(ValueError, match=r'^unknown mask method "gzip" \(expected "none" \| "rle"'):
        tensogram.encode({}, [({"type": "ntensor", "shape": [2], "dtype": "float64"}, np.array([1.0, np.nan]))],
                         allow_nan=True, nan_mask_method="gzip")  # fmt: skip

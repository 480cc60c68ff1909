"""Spec 08 §2: the iterator protocol of TensogramFileIter, AsyncTensogramFileIter and MessageIter
(``__len__`` = remaining, ``__repr__``, position before decoding, exhaustion, independence)."""

import asyncio

import numpy as np
import pytest

import tensogram

DESC = {"type": "ntensor", "shape": [4], "dtype": "float64"}


def _message(value, **pipeline):
    return tensogram.encode({"base": [{"value": value}]}, [({**DESC, **pipeline}, np.full(4, float(value)))])


@pytest.fixture
def three(tmp_path):
    path = str(tmp_path / "three.tgm")
    with tensogram.TensogramFile.create(path) as f:
        for v in range(3):
            f.append({"base": [{"value": v}]}, [(DESC, np.full(4, float(v)))])
    return path


def _values(messages):
    return [m.metadata["value"] for m in messages]


def test_file_iter_len_and_repr_follow_the_position(three):
    f = tensogram.TensogramFile.open(three)
    it = iter(f)
    assert iter(it) is it
    assert type(it).__name__ == "TensogramFileIter"
    assert len(it) == 3 and repr(it) == "TensogramFileIter(position=0, remaining=3)"
    assert next(it).metadata["value"] == 0
    assert len(it) == 2 and repr(it) == "TensogramFileIter(position=1, remaining=2)"
    assert _values(it) == [1, 2]
    for _ in range(2):  # every call after the end raises, the position stays at the count
        with pytest.raises(StopIteration):
            next(it)
        assert repr(it) == "TensogramFileIter(position=3, remaining=0)" and len(it) == 0


def test_file_iterators_are_independent_snapshots(three):
    f = tensogram.TensogramFile.open(three)
    a, b = iter(f), iter(f)
    next(a)
    next(a)
    assert (len(a), len(b)) == (1, 3)
    f.append({"base": [{"value": 3}]}, [(DESC, np.full(4, 3.0))])
    assert len(f) == 4 and len(b) == 3          # the count was taken when the iterator was created
    assert _values(b) == [0, 1, 2] and _values(iter(f)) == [0, 1, 2, 3]


def test_file_iter_position_advances_before_decoding(tmp_path):
    good = [_message(0), _message(2)]
    bad = bytearray(_message(1, compression="zstd"))
    payload = bytes(bad).find(b"\x28\xb5\x2f\xfd")           # the zstd frame magic
    assert payload > 0
    bad[payload:payload + 4] = b"\0\0\0\0"                    # the payload no longer decodes
    path = str(tmp_path / "bad.tgm")
    with open(path, "wb") as fh:
        fh.write(good[0] + bytes(bad) + good[1])
    it = iter(tensogram.TensogramFile.open(path))
    assert len(it) == 3
    assert next(it).metadata["value"] == 0
    with pytest.raises(ValueError):
        next(it)
    assert repr(it) == "TensogramFileIter(position=2, remaining=1)"
    assert next(it).metadata["value"] == 2                   # the next call goes on with the next message


def test_message_iter_len_and_repr():
    buf = b"".join(_message(v) for v in range(2))
    it = tensogram.iter_messages(buf)
    assert iter(it) is it
    assert len(it) == 2 and repr(it) == "MessageIter(position=0, remaining=2)"
    next(it)
    assert repr(it) == "MessageIter(position=1, remaining=1)"
    next(it)
    with pytest.raises(StopIteration):
        next(it)
    assert repr(it) == "MessageIter(position=2, remaining=0)" and len(it) == 0


def test_async_iter_protocol(three):
    async def run():
        af = await tensogram.AsyncTensogramFile.open(three)
        with pytest.raises(RuntimeError, match=r"^message count not yet known; call 'await f\.message_count\(\)' first$"):
            len(af)
        assert await af.message_count() == 3
        it = af.__aiter__()
        assert it.__aiter__() is it
        assert len(it) == 3 and repr(it) == "AsyncTensogramFileIter(position=0, remaining=3)"
        # The index is taken at call time: two awaitables in flight, each its own message.
        first, second = it.__anext__(), it.__anext__()
        assert isinstance(first, asyncio.Future)
        assert repr(it) == "AsyncTensogramFileIter(position=2, remaining=1)"
        assert [m.metadata["value"] for m in await asyncio.gather(second, first)] == [1, 0]
        assert (await it.__anext__()).metadata["value"] == 2
        # Past the end: StopAsyncIteration at call time, and the position still moves.
        with pytest.raises(StopAsyncIteration):
            it.__anext__()
        assert repr(it) == "AsyncTensogramFileIter(position=4, remaining=0)" and len(it) == 0

        it2 = af.__aiter__()
        assert [m.metadata["value"] async for m in it2] == [0, 1, 2]
        assert repr(it2) == "AsyncTensogramFileIter(position=4, remaining=0)"   # N + 1 after async for

    asyncio.run(run())

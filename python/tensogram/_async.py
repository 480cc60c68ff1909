"""asyncio access to Tensogram files.

Every call runs the synchronous `TensogramFile` method in a worker thread
(`asyncio.to_thread`). The library releases the GIL while it reads and
decodes and one file handle serves concurrent calls, so several awaits on one
`AsyncTensogramFile` proceed in parallel — for remote files their range
requests overlap.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterable, Optional, Sequence, Tuple

from ._tensogram import TensogramFile, _check_remote_arguments


class AsyncTensogramFile:
    """A Tensogram file for asyncio code; create it with ``await AsyncTensogramFile.open(...)``.

    ``len(f)`` and ``async for`` need the message count, so ``await f.message_count()`` first (a
    RuntimeError says so otherwise).
    """

    def __init__(self, sync_file: TensogramFile) -> None:
        self._file = sync_file
        self._count: Optional[int] = None

    # Spec 08 §3.4: `open`/`open_remote` check their arguments when called (and need a running
    # loop: RuntimeError "no running event loop"), then return an asyncio.Future whose work has
    # already started; URL, options and I/O errors surface when it is awaited.

    @classmethod
    def open(cls, source: Any, *, bidirectional: bool = True) -> "asyncio.Future[AsyncTensogramFile]":
        """Opens a local path or a remote URL (see ``TensogramFile.open``); await the result."""
        loop = asyncio.get_running_loop()
        _check_remote_arguments(None, None, bidirectional)
        return loop.run_in_executor(None, lambda: cls(TensogramFile.open(source, bidirectional=bidirectional)))

    @classmethod
    def open_remote(
        cls, source: str, storage_options: Optional[dict] = None, *, bidirectional: bool = True
    ) -> "asyncio.Future[AsyncTensogramFile]":
        """Opens an http(s) URL (see ``TensogramFile.open_remote``); await the result."""
        loop = asyncio.get_running_loop()
        _check_remote_arguments(source, storage_options, bidirectional)
        return loop.run_in_executor(
            None, lambda: cls(TensogramFile.open_remote(source, storage_options, bidirectional=bidirectional))
        )

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self._file, name), *args, **kwargs)

    async def message_count(self) -> int:
        """Number of messages (scanned once, then cached)."""
        if self._count is None:
            self._count = await self._call("message_count")
        return self._count

    async def decode_message(
        self, index: int, native_byte_order: bool = True, threads: int = 0, verify_hash: bool = False
    ):
        """Message ``index`` as a ``Message``."""
        return await self._call(
            "decode_message", index, native_byte_order=native_byte_order, threads=threads, verify_hash=verify_hash
        )

    async def file_decode_metadata(self, msg_index: int):
        return await self._call("file_decode_metadata", msg_index)

    async def file_decode_descriptors(self, msg_index: int):
        return await self._call("file_decode_descriptors", msg_index)

    async def file_decode_object(self, msg_index: int, obj_index: int, **kwargs: Any):
        return await self._call("file_decode_object", msg_index, obj_index, **kwargs)

    async def file_decode_range(self, msg_index: int, obj_index: int, ranges: Sequence[Tuple[int, int]], **kwargs: Any):
        return await self._call("file_decode_range", msg_index, obj_index, list(ranges), **kwargs)

    async def file_decode_object_batch(self, msg_indices: Iterable[int], obj_index: int, **kwargs: Any):
        """``file_decode_object`` over several messages, concurrently (remote files only)."""
        if not self._file.is_remote():
            raise OSError("batch object decode requires a remote backend")  # spec 08 §1.8
        return list(
            await asyncio.gather(*(self.file_decode_object(i, obj_index, **kwargs) for i in msg_indices))
        )

    async def file_decode_range_batch(
        self, msg_indices: Iterable[int], obj_index: int, ranges: Sequence[Tuple[int, int]], **kwargs: Any
    ):
        """``file_decode_range`` over several messages, concurrently (remote files only)."""
        if not self._file.is_remote():
            raise OSError("batch range decode requires a remote backend")  # spec 08 §1.8
        return list(
            await asyncio.gather(*(self.file_decode_range(i, obj_index, ranges, **kwargs) for i in msg_indices))
        )

    async def read_message(self, index: int) -> bytes:
        return await self._call("read_message", index)

    async def messages(self) -> list:
        return await self._call("messages")

    async def prefetch_layouts(self, msg_indices: Iterable[int]) -> None:
        """Reads the metadata and index frames of these messages concurrently, so that later object
        reads fetch only their own frames."""
        await asyncio.gather(*(self.file_decode_descriptors(i) for i in msg_indices))

    def is_remote(self) -> bool:
        return self._file.is_remote()

    def source(self) -> str:
        return self._file.source()

    def __len__(self) -> int:
        if self._count is None:
            # spec 08 §1.8
            raise RuntimeError("message count not yet known; call 'await f.message_count()' first")
        return self._count

    def __aiter__(self) -> "AsyncTensogramFileIter":
        return AsyncTensogramFileIter(self, len(self))

    async def __aenter__(self) -> "AsyncTensogramFile":
        return self

    async def __aexit__(self, *exc: Any) -> bool:
        return False  # spec 08 §1.8: closes nothing

    def __repr__(self) -> str:
        return f"AsyncTensogramFile(source='{self._file.source()}')"  # spec 08 §6


class AsyncTensogramFileIter:
    """``async for meta, objects in f``: decodes the messages in order.

    ``__anext__`` takes the next index when it is called and returns an awaitable for
    that message, so several may be in flight; past the end it raises ``StopAsyncIteration`` at
    once (the position still advances). ``len()`` is what is left."""

    def __init__(self, f: AsyncTensogramFile, count: int) -> None:
        self._f = f
        self._count = count
        self._position = 0

    def __aiter__(self) -> "AsyncTensogramFileIter":
        return self

    def __anext__(self) -> "asyncio.Future[Any]":
        i = self._position
        self._position += 1
        if i >= self._count:
            raise StopAsyncIteration
        return asyncio.ensure_future(self._f.decode_message(i))

    def __len__(self) -> int:
        return max(self._count - self._position, 0)

    def __repr__(self) -> str:
        return f"AsyncTensogramFileIter(position={self._position}, remaining={len(self)})"

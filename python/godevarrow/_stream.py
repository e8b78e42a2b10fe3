"""ArrayStream, and the constructors stream() and stream_of().

A stream is a ``cdevice.OneShotStream`` in Go (docs/design.md, "A stream's
life"): read once, or moved out once; closing it while another thread reads
waits for that read without the GIL."""

from __future__ import annotations

import bisect
import collections.abc
import itertools
import os
import threading
import weakref
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Coroutine,
    Generic,
    Iterator,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
    overload,
)

from . import _godevarrow as _lib
from ._array import Array, RecordBatch
from ._device import DeviceType
from ._godevarrow import ArrowInvalid, GodevarrowError, GodevarrowTypeError
from ._protocol import check_kwargs, no_protocol, producer_error, schema_capsule
from ._schema import Schema, requested_handle, schema

if TYPE_CHECKING:  # pragma: no cover
    from ._table import Table  # which imports this module

# How far an ``async for`` reads ahead (ArrayStream.__anext__).
ASYNC_DEPTH = 64

# An ``async for`` that always finds an array ready gives the event loop a
# turn at least every this many arrays, and at least every 2 ms (the
# extension's StreamAnext, capsule/stream_async.c).
ASYNC_TURN_ARRAYS = 1024

# ArrayStream.__anext__ returns the extension's awaitable, a coroutine in all
# but its class: asyncio.create_task and iscoroutine accept it
collections.abc.Coroutine.register(_lib.StreamAnext)


class _WakePipe:
    """The pipe on which a read-ahead stream wakes the event loop (see
    ArrayStream.__anext__). Python owns it: Go writes one byte to it when an
    armed wait has news (each wait arms it; the byte disarms it, and a wait
    given up disarms it), and only while the stream is open; it is closed
    once, after the stream.

    Several tasks may await ``__anext__`` of one stream at once: the pipe has
    one reader callback on the loop, which wakes every waiter, and the
    waiters are kept in the order their ``__anext__`` began (their tickets),
    so the first to ask is the first to try the array that arrived.

    The reader callback stays on the loop from one wait to the next: an
    ``async for`` over a slow stream waits for nearly every array, and
    adding and removing the callback each time (two ``epoll_ctl`` calls and
    their handles) cost about as much as the rest of the wait. Once the
    last waiter has left, the callback comes off at the loop's next pass
    unless a wait began meanwhile (`release_soon`). Closing the pipe (the
    stream's finalizer, or the end of its last wait after a close) takes
    the callback off first."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.waiters: list[tuple[int, Any]] = []  # (ticket, future), in ticket order
        self.loop: Any = None  # the event loop the reader callback is on
        self.tickets = itertools.count()
        self.closing = False
        self.release_pending = False  # release_if_idle is scheduled on self.loop
        self._lock = threading.Lock()  # close() may run on two threads at once

    def close(self) -> None:
        """Closes the pipe (once), its reader callback taken off its loop
        first: here when this thread runs that loop or the loop is stopped,
        else on the loop's thread (which closes the pipe then)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            import asyncio

            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop.is_running() and running is not loop:
                try:
                    loop.call_soon_threadsafe(self.close)
                    return
                except RuntimeError:
                    pass  # closed meanwhile: its selector is gone
            else:
                self.forget_loop()
        with self._lock:
            fds = (self.read_fd, self.write_fd)
            self.read_fd = self.write_fd = -1
        if fds[0] >= 0:
            os.close(fds[0])
            os.close(fds[1])

    def stream_closed(self) -> None:
        """The stream was closed (ArrayStream.close): Go writes no more, so
        the pipe closes now, or once its callback is off the loop (after its
        last waiter, woken by the end of the read-ahead)."""
        self.closing = True
        if not self.waiters and self.loop is None:
            self.close()

    def listen(self, loop: Any) -> None:
        """Puts the reader callback on loop (in its thread), unless it is on
        it already. A callback left on another loop that is closed or no
        longer runs comes off first; one that runs elsewhere is an error."""
        if self.loop is loop:
            return
        if self.loop is not None:
            if self.waiters or self.loop.is_running():
                raise GodevarrowError(
                    "the stream is being awaited in another event loop; read a stream from one loop at a time"
                )
            self.forget_loop()
        loop.add_reader(self.read_fd, self.woken)
        self.loop = loop

    def forget_loop(self) -> None:
        """Takes the reader callback off its loop (in the loop's thread, or
        with the loop stopped; a closed loop's selector is gone already)."""
        loop, self.loop = self.loop, None
        self.release_pending = False
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self.read_fd)

    def release_soon(self) -> None:
        """After the last waiter left: the callback comes off at the loop's
        next pass unless a wait began meanwhile."""
        if not self.release_pending:
            self.release_pending = True
            self.loop.call_soon(self.release_if_idle)

    def release_if_idle(self) -> None:
        if not self.release_pending:
            return  # taken off meanwhile (forget_loop)
        self.release_pending = False
        if self.waiters or self.loop is None:
            return
        self.forget_loop()
        if self.closing:
            self.close()

    def woken(self) -> None:
        """The event loop's reader callback: drain the pipe, wake every waiter."""
        try:
            while os.read(self.read_fd, 4096):
                pass
        except OSError:  # drained (EAGAIN)
            pass
        for _, future in self.waiters:
            if not future.done():
                future.set_result(None)


def _ticket(waiter: tuple[int, Any]) -> int:
    return waiter[0]


_A = TypeVar("_A", bound=Array)  # what a stream yields: Array, or RecordBatch for a stream of struct arrays


class ArrayStream(_lib.StreamBase, Generic[_A]):
    """A stream of arrays with one schema on one device type; read once.

    Iterating yields `Array` (`RecordBatch` for struct streams); for type
    checkers, ``ArrayStream[RecordBatch]`` is a stream known to yield batches
    (``gda.stream(batch)``), and ``ArrayStream[Array]`` one that may yield
    either.
    Exporting it (``__arrow_c_stream__``) moves it out: afterwards it cannot be
    read or exported again.
    """

    # The handle (_h), _info, _reads_ahead and _wake live in the C base
    # (capsule/stream_base.c), which also makes the stream from a handle and
    # implements __iter__ and close: the calls of every short stream's
    # set-up run with no Python frame. Schema, device type and array class
    # (_info) are asked for when first needed: a stream handed on unread
    # never needs them.
    __slots__ = ("__weakref__",)
    _info: Optional[tuple[Schema, int, type[_A]]]
    _wake: Optional[_WakePipe]
    # the classes of the arrays, by whether they are struct arrays (read by
    # the C base's __iter__ and by _stream_info)
    _array_classes = (Array, RecordBatch)

    def _stream_info(self) -> tuple[Schema, int, type[_A]]:
        if self._info is None:
            info = _lib.stream_info(self._h)
            # the class the arrays get; the type parameter is what a type checker was told of it
            cls = cast("type[_A]", self._array_classes[info.is_struct])
            self._info = (Schema(info.schema), info.device_type, cls)
        return self._info

    @property
    def schema(self) -> Schema:
        """The schema every array of the stream has."""
        return self._stream_info()[0]

    @property
    def device_type(self) -> DeviceType:
        """The kind of device the stream's arrays live on."""
        return DeviceType(self._stream_info()[1])

    if TYPE_CHECKING:  # implemented by the C base (capsule/stream_base.c)

        def __iter__(self) -> Iterator[_A]:
            """Iterates the arrays (RecordBatch for a stream of struct arrays)
            until the end; a for loop runs no Python code per array."""
            ...

        def close(self) -> None:
            """Release the stream (idempotent). A read in progress in another
            thread is waited for, without holding the GIL."""
            ...

    def __next__(self) -> _A:
        """The next array; StopIteration at the end."""
        arr = _lib.stream_next(self._h, (self._info or self._stream_info())[2])
        if arr is None:
            raise StopIteration
        return arr

    def read_all(self) -> list[_A]:
        """Every remaining array, in order."""
        return list(self)

    def prefetch(self, depth: int = 2) -> ArrayStream[_A]:
        """A stream that reads this one ahead in the background once its reads block.

        The new stream is read where it is cheapest. While its reads are
        fast it is read in the consumer's thread, as this one would be: a
        producer that needs the GIL (a reader over a Python iterable) gets
        no thread of its own, which would only hand the GIL to and fro for
        every array. Once reads block (a read blocks when it takes more
        than 2 ms of work, or more than 50 µs of which the reading thread
        spent less than half working: it waited for I/O, a lock or a device;
        a slow read makes the next ones measured, and two measured reads in a
        row that block move the stream, since one may have waited for the
        GIL; after the first 8 reads, one in 16 to 64 is timed while they
        stay fast), Go reads up to ``depth`` arrays ahead on its own thread,
        for good (the GIL is not held while the producer works), so a slow
        producer and a slow consumer overlap. ``depth`` is at least 1; more than 1,024 reads
        1,024 ahead (the queue is allocated up front). Arrays and errors
        arrive in the producer's order: an error at array k is raised after
        arrays 0..k-1. This stream is moved into the new one; closing the
        new one stops the reading.
        """
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise GodevarrowTypeError(f"depth must be an int, not {type(depth).__name__}")
        if not -(2**63) <= depth < 2**63:  # the extension takes an int64
            raise ArrowInvalid(f"depth {depth} is out of range (at least 1, and below 2^63)")
        return ArrayStream(_lib.stream_prefetch(self._h, depth, True))

    def __aiter__(self) -> AsyncIterator[_A]:
        """Iterates the arrays from asyncio, reading where it is cheapest (see `__anext__`)."""
        self._read_where_cheapest_for_async()
        # the extension's iterator: an async for runs no Python code per ready array
        return _lib.stream_aiter(self, self._h, (self._info or self._stream_info())[2])

    def _read_where_cheapest_for_async(self) -> None:
        if not self._reads_ahead:
            # read in the loop's thread while reads are fast, ahead once one
            # blocks; the first read is a probe (see __anext__). Without C
            # bookkeeping (out of memory) this reads ahead at once.
            self._h = _lib.stream_prefetch(self._h, ASYNC_DEPTH, True)
            self._reads_ahead = True

    def __anext__(self) -> Coroutine[Any, Any, _A]:
        """The next array, read where it is cheapest, without blocking the
        event loop for longer than a fast read.

        The first ``__anext__`` is a probe: Go makes that read on a thread of
        its own while the loop's thread waits up to 50 µs for it without the
        GIL (a producer that needs the GIL gets it at once; later, the loop
        runs while it waits). When that read did not block (`prefetch`'s
        rule: it did not wait for I/O, a lock or a device, and did not work
        for over 2 ms) and came within those 50 µs, the stream's later reads
        are made in the loop's thread, as a for loop makes them: a producer
        that needs the GIL never gets a thread of its own for fast reads,
        which would hand the GIL to and fro for every array. A probe that
        did not block but came only after the loop stopped waiting for it
        is not trusted (a producer that works, then waits for the loop, can
        look like that): the next ``__anext__`` is a probe again, and after
        four such probes in a row the stream is read ahead. Otherwise, and
        once later reads block (by `prefetch`'s rule), Go reads up to
        `ASYNC_DEPTH` arrays ahead, for good: the loop runs while a goroutine
        reads, ``__anext__`` returns at once while arrays are queued, and the
        loop is woken through a pipe when one arrives, so many slow streams
        are read concurrently.

        So a producer that waits for the event loop itself before its first
        array is read ahead; one whose first read is fast and that later
        waits for the loop would wait for ever in the loop's thread: read
        such a stream on a thread of your own (a plain loop under
        ``asyncio.to_thread``).

        An ``async for`` gives the event loop a turn (one bare yield: its
        other ready tasks run) at least every `ASYNC_TURN_ARRAYS` arrays and
        at least every 2 ms, whether it reads in the loop's thread or finds
        arrays ready; waiting for an array is a turn too. The awaitable is
        made in C, with no coroutine frame. A cancelled ``__anext__`` loses
        nothing: a read in the loop's thread ends within its step, and one
        ahead delivers its array to the next ``__anext__``."""
        self._read_where_cheapest_for_async()
        return _lib.stream_anext(self, self._h, (self._info or self._stream_info())[2])

    async def _anext_wait(self) -> _A:
        """__anext__'s wait, once no array was ready at its first step."""
        cls = (self._info or self._stream_info())[2]
        ticket: Optional[int] = None  # this call's place among concurrent ones
        while True:
            ticket = await self._ready(ticket)
            arr = _lib.stream_loop_read(self._h, cls)
            if arr is not NotImplemented:
                break
        if arr is None:
            raise StopAsyncIteration
        return cast("_A", arr)

    async def _ready(self, ticket: Optional[int]) -> int:
        """Waits until the read-ahead has an array or ended (or the stream was
        closed meanwhile: the next read then says so). Returns the caller's
        ticket (see _WakePipe), given on its first wait."""
        import asyncio

        loop = asyncio.get_running_loop()
        pipe = self._wake
        if pipe is None:
            pipe = self._wake = _WakePipe()
            weakref.finalize(self, pipe.close)
            _lib.stream_set_wake(self._h, pipe.write_fd)
        _lib.stream_arm_wake(self._h, True)
        pipe.listen(loop)
        if ticket is None:
            ticket = next(pipe.tickets)
        woken: asyncio.Future[None] = loop.create_future()
        entry = (ticket, woken)
        bisect.insort(pipe.waiters, entry, key=_ticket)
        try:
            await woken
        except BaseException:
            if pipe.waiters == [entry]:
                # given up (cancelled): no byte for this wait
                try:
                    _lib.stream_arm_wake(self._h, False)
                except GodevarrowError:
                    pass  # closed meanwhile: nothing is armed any more
            raise
        finally:
            pipe.waiters.remove(entry)
            if not pipe.waiters:
                pipe.release_soon()
        return ticket

    async def aclose(self) -> None:
        """Close the stream without blocking the event loop (after a read in
        progress, such as that of a cancelled ``__anext__``)."""
        import asyncio

        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> ArrayStream[_A]:
        """``async with``: closes the stream on exit."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Closes the stream."""
        await self.aclose()

    def __enter__(self) -> ArrayStream[_A]:
        """``with``: closes the stream on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Closes the stream."""
        self.close()

    def __arrow_c_schema__(self) -> object:
        """The stream's schema as an ``arrow_schema`` capsule."""
        return self.schema.__arrow_c_schema__()

    def __reduce__(self) -> Any:
        """Streams are read once and cannot be pickled: raises TypeError."""
        raise GodevarrowTypeError(
            "an ArrayStream is read once and cannot be pickled; pickle its arrays (read_all()) instead"
        )

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """Move the stream out as an ArrowArrayStream; chunks on a device are copied to the host."""
        return _lib.export_stream(self._h, requested_handle(requested_schema), False)

    def __arrow_c_device_stream__(self, requested_schema: object = None, **kwargs: Any) -> object:
        """Move the stream out as an ArrowDeviceArrayStream."""
        check_kwargs("__arrow_c_device_stream__", kwargs)
        return _lib.export_stream(self._h, requested_handle(requested_schema), True)

    def __repr__(self) -> str:
        return f"godevarrow.ArrayStream<{self.schema}> on {self.device_type.name}"


_STREAM_PROTOCOLS = "__arrow_c_device_stream__, __arrow_c_stream__"


@overload
def stream(obj: ArrayStream[_A], *, requested_schema: object = None) -> ArrayStream[_A]: ...
@overload
def stream(obj: Union[RecordBatch, Table], *, requested_schema: object = None) -> ArrayStream[RecordBatch]: ...
@overload
def stream(obj: object, *, requested_schema: object = None) -> ArrayStream[Array]: ...


def stream(obj: object, *, requested_schema: object = None) -> ArrayStream[Any]:
    """An ArrayStream from a stream producer, or a one-chunk stream of an Array."""
    st: ArrayStream[Any]
    if isinstance(obj, ArrayStream):
        st = obj
    elif isinstance(obj, Array):
        st = ArrayStream(_lib.stream_from_arrays([obj._h], None))
    else:
        # the extension asks the producer's protocol (device first), as it
        # does for arrays; a producer's exception becomes the package's
        if requested_schema is not None and not (
            hasattr(obj, "__arrow_c_device_stream__") or hasattr(obj, "__arrow_c_stream__")
        ):
            raise no_protocol(obj, "stream", _STREAM_PROTOCOLS)  # before a bad request says otherwise
        try:
            h = _lib.import_stream_from(obj, None if requested_schema is None else schema_capsule(requested_schema))
        except Exception as e:
            raise producer_error(obj, e)  # noqa: B904 (the cause is set; ours pass unchanged)
        if h is NotImplemented:
            raise no_protocol(obj, "stream", _STREAM_PROTOCOLS)
        st = ArrayStream(h)
    if requested_schema is not None:
        target = schema(requested_schema)
        if target != st.schema:
            st = ArrayStream(_lib.stream_cast(st._h, target._h))
    return st


def stream_of(arrays: Sequence[_A], schema_: Optional[Schema] = None) -> ArrayStream[_A]:
    """A stream over arrays already in memory (all of one type and device)."""
    return ArrayStream(_lib.stream_from_arrays([a._h for a in arrays], None if schema_ is None else schema_._h))

"""The public classes and constructors. Every method makes one call into the
Go extension; nothing here touches C structs."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Optional, Sequence, Union

from . import _godevarrow as _lib
from ._device import Device, DeviceLike, DeviceType, as_device
from ._godevarrow import ArrowInvalid, ArrowNotImplementedError, GodevarrowTypeError, StreamError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

_FLAG_NULLABLE = 2

# ---------------------------------------------------------------- helpers


def _no_protocol(obj: object, what: str, protocols: str) -> GodevarrowTypeError:
    return GodevarrowTypeError(
        f"cannot make a godevarrow {what} from an object of type {type(obj).__name__}: "
        f"it implements none of {protocols}"
    )


def _check_kwargs(method: str, kwargs: dict[str, Any]) -> None:
    # The PyCapsule interface: unknown keywords are accepted only when None.
    for key, value in kwargs.items():
        if value is not None:
            raise ArrowNotImplementedError(f"{method}() does not support the keyword {key!r} (got {value!r})")


def _requested_handle(requested_schema: object) -> Any:
    """A schema handle for a requested_schema capsule (borrowed, not consumed)."""
    if requested_schema is None:
        return None
    if isinstance(requested_schema, Schema):
        return requested_schema._h
    return _lib.import_schema(requested_schema, False)


def _ask(method: Any, requested_schema: object) -> Any:
    """``method(requested_schema)`` of a producer, asked again without the
    request when the producer refuses one (pylibcudf raises ``ValueError`` for
    any non-None value, nanoarrow ``NotImplementedError``): the consumer then
    casts on its side, as the PyCapsule spec expects."""
    if requested_schema is None:
        return method(None)
    try:
        return method(_schema_capsule(requested_schema))
    except (ValueError, NotImplementedError):
        return method(None)


def _schema_capsule(requested_schema: object) -> object:
    """The capsule to pass on to a producer for a consumer's requested_schema."""
    if requested_schema is None:
        return None
    if not hasattr(requested_schema, "__arrow_c_schema__"):
        raise _no_protocol(requested_schema, "requested schema", "__arrow_c_schema__")
    return requested_schema.__arrow_c_schema__()


def _decode_metadata(blob: Optional[bytes]) -> dict[bytes, bytes]:
    if not blob:
        return {}
    (n,) = struct.unpack_from("=i", blob, 0)
    pos, out = 4, {}
    for _ in range(n):
        (klen,) = struct.unpack_from("=i", blob, pos)
        key = blob[pos + 4 : pos + 4 + klen]
        pos += 4 + klen
        (vlen,) = struct.unpack_from("=i", blob, pos)
        out[key] = blob[pos + 4 : pos + 4 + vlen]
        pos += 4 + vlen
    return out


# ----------------------------------------------------------------- Schema


class Schema:
    """An exact Arrow schema (format string, name, flags, metadata, children).

    Make one with :func:`godevarrow.schema`.
    """

    __slots__ = ("_h", "_info", "__weakref__")

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self._info: Optional[tuple[str, str, int, Optional[bytes], int, bool]] = None

    def _get_info(self) -> tuple[str, str, int, Optional[bytes], int, bool]:
        if self._info is None:
            self._info = _lib.schema_info(self._h)
        return self._info

    def __arrow_c_schema__(self) -> object:
        return _lib.export_schema(self._h)

    @property
    def format(self) -> str:
        return self._get_info()[0]

    @property
    def name(self) -> str:
        return self._get_info()[1]

    @property
    def flags(self) -> int:
        return self._get_info()[2]

    @property
    def nullable(self) -> bool:
        return bool(self.flags & _FLAG_NULLABLE)

    @property
    def metadata(self) -> dict[bytes, bytes]:
        return _decode_metadata(self._get_info()[3])

    @property
    def children(self) -> list[Schema]:
        return [Schema(_lib.schema_child(self._h, i)) for i in range(self._get_info()[4])]

    @property
    def dictionary(self) -> Optional[Schema]:
        """The schema of the dictionary values of a dictionary-encoded field."""
        return Schema(_lib.schema_child(self._h, -1)) if self._get_info()[5] else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            if hasattr(other, "__arrow_c_schema__"):
                other = schema(other)
            else:
                return NotImplemented
        return bool(_lib.schema_equal(self._h, other._h))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as Arrow IPC (the schema of an empty batch, exact field)."""
        return (_schema_from_ipc, (_ipc_bytes_of_schema(self),))

    def __hash__(self) -> int:
        return hash((self.format, self.name, self.flags))

    def __str__(self) -> str:
        return str(_lib.schema_str(self._h))

    def __repr__(self) -> str:
        return f"godevarrow.Schema({self})"

    def to_pyarrow(self) -> Union[pyarrow.Schema, pyarrow.Field]:
        """A ``pyarrow.Schema`` for a struct with no name (a record batch
        schema), else a ``pyarrow.Field``."""
        import pyarrow as pa

        if self.format == "+s" and self.name == "" and self.dictionary is None:
            return pa.schema(self)
        return pa.field(self)


def schema(obj: object) -> Schema:
    """A Schema from any object with ``__arrow_c_schema__``."""
    if isinstance(obj, Schema):
        return obj
    if isinstance(obj, (Array, ArrayStream)):
        return obj.schema
    if not hasattr(obj, "__arrow_c_schema__"):
        raise _no_protocol(obj, "schema", "__arrow_c_schema__")
    return Schema(_lib.import_schema(obj.__arrow_c_schema__(), True))


# ------------------------------------------------------------------ Array


class Array(_lib.ArrayBase):
    """An Arrow array whose buffers live on a device; zero-copy.

    Make one with :func:`godevarrow.array`. A struct-typed Array is a record
    batch (:class:`RecordBatch`). The exchange protocols
    ``__arrow_c_device_array__`` and ``__arrow_c_schema__`` are implemented
    in C by the base class (one call into Go each).
    """

    __slots__ = ("__weakref__",)

    # -- properties
    @property
    def schema(self) -> Schema:
        return Schema(_lib.schema_of(self._h))

    @property
    def device(self) -> Device:
        info = self._get_info()
        return Device(info[3], info[4])

    @property
    def device_type(self) -> DeviceType:
        return DeviceType(self._get_info()[3])

    @property
    def device_id(self) -> int:
        return self._get_info()[4]

    def __len__(self) -> int:
        return self._get_info()[0]

    @property
    def offset(self) -> int:
        return self._get_info()[1]

    @property
    def null_count(self) -> int:
        """The number of nulls; -1 when unknown and the data is on a device."""
        return self._get_info()[2]

    # -- protocols (__arrow_c_schema__ and __arrow_c_device_array__: see ArrayBase)
    def _c_device_array_requested(self, requested_schema: object = None, **kwargs: Any) -> tuple[object, object]:
        # __arrow_c_device_array__ with a requested schema or keywords
        _check_kwargs("__arrow_c_device_array__", kwargs)
        return _lib.export_array(self._h, _requested_handle(requested_schema), True)

    def _c_array_slow(self, requested_schema: object = None) -> tuple[object, object]:
        # __arrow_c_array__ of data on a device (copied to the host) or with a request
        return _lib.export_array(self._on_host()._h, _requested_handle(requested_schema), False)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """A one-chunk stream (copied to the host when on another device)."""
        return stream(self._on_host()).__arrow_c_stream__(requested_schema)

    def __arrow_c_device_stream__(self, requested_schema: object = None, **kwargs: Any) -> object:
        """A one-chunk device stream."""
        _check_kwargs("__arrow_c_device_stream__", kwargs)
        return stream(self).__arrow_c_device_stream__(requested_schema)

    def _on_host(self) -> Array:
        return self if self.device_type == DeviceType.CPU else self.to_device("cpu")

    # -- pickling
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as Arrow IPC: device data is copied to the host, and put
        back on the same kind of device when the loading process has one."""
        return (_array_from_ipc, (_ipc_bytes_of_array(self), int(self.device_type), self.device_id))

    # -- operations
    # -- DLPack
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[tuple[int, int]] = None,
        dl_device: Optional[tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> object:
        """A DLPack capsule over the values of a 1-D numeric array without nulls."""
        from . import _dlpack

        return _dlpack.export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        return _lib.dlpack_device(self._h)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 of a 1-D numeric CUDA array without nulls
        (AttributeError for arrays that are not in CUDA device memory)."""
        from . import _dlpack

        return _dlpack.cuda_array_interface(self)

    def slice(self, offset: int = 0, length: Optional[int] = None) -> Array:
        """A zero-copy slice."""
        n = len(self)
        if length is None:
            length = max(n - offset, 0)
        return type(self)(_lib.array_slice(self._h, offset, length))

    def to_device(self, device: DeviceLike) -> Array:
        """A copy on ``device`` (the same object when already there)."""
        target = as_device(device)
        if target == self.device:
            return self
        return type(self)(_lib.array_to_device(self._h, int(target.device_type), target.device_id))

    def to_pyarrow(self) -> Any:
        """A ``pyarrow.Array`` (zero-copy for CPU data, else a copy to the host)."""
        import pyarrow as pa

        return pa.array(self._on_host())

    def validate(self, full: bool = True) -> None:
        """Raise ``ValueError`` (``ArrowInvalid``) describing the first problem found."""
        _lib.array_validate(self._h, full)

    def __repr__(self) -> str:
        return f"godevarrow.{type(self).__name__}<{self.schema}>[{len(self)}] on {self.device}"


class RecordBatch(Array):
    """A struct-typed Array whose children are the columns."""

    __slots__ = ()

    @property
    def num_rows(self) -> int:
        return len(self)

    @property
    def num_columns(self) -> int:
        return self._get_info()[5]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.schema.children]

    def column(self, i: Union[int, str]) -> Array:
        if isinstance(i, str):
            names = self.column_names
            if names.count(i) != 1:
                raise KeyError(f"no column named {i!r}" if i not in names else f"column name {i!r} is ambiguous")
            i = names.index(i)
        n = self.num_columns
        if not -n <= i < n:
            raise IndexError(f"column index {i} out of range for {n} columns")
        if i < 0:
            i += n
        return Array(_lib.array_column(self._h, i))

    @property
    def columns(self) -> list[Array]:
        return [self.column(i) for i in range(self.num_columns)]

    def to_pyarrow(self) -> Any:
        """A ``pyarrow.RecordBatch`` (zero-copy for CPU data, else a copy to the host)."""
        import pyarrow as pa

        return pa.record_batch(self._on_host())


# ------------------------------------------------------------- pickling
# Arrow IPC carries every type, field names, nullability and metadata. A
# non-struct Array travels as the single column of a batch whose field is the
# array's own (name, flags, metadata); a record batch travels as itself.

_IPC_COLUMN = "godevarrow:array"


def _ipc_bytes(batch: Any) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _ipc_bytes_of_array(arr: Array) -> bytes:
    import pyarrow as pa

    host = arr._on_host()
    if host._is_struct():
        return _ipc_bytes(pa.record_batch(host))
    # through a one-column batch made in Go: pyarrow has no Python class for
    # some array types (month intervals) but reads any record batch
    batch = pa.record_batch(RecordBatch(_lib.array_as_batch(host._h)))
    return _ipc_bytes(batch.replace_schema_metadata({_IPC_COLUMN: "1"}))


def _ipc_bytes_of_schema(sch: Schema) -> bytes:
    import pyarrow as pa

    if sch.format == "+s" and sch.dictionary is None:
        target = pa.schema(sch)
    else:
        target = pa.schema([pa.field(sch)], metadata={_IPC_COLUMN: "1"})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, target):
        pass  # the schema message alone
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _read_ipc(data: bytes) -> Any:
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()


def _array_from_ipc(data: bytes, device_type: int, device_id: int) -> Array:
    batch = _read_ipc(data)
    meta = batch.schema.metadata or {}
    if meta.get(_IPC_COLUMN.encode()) == b"1":
        arr: Array = record_batch(batch.replace_schema_metadata(None)).column(0)
    else:
        arr = record_batch(batch)
    if device_type != DeviceType.CPU and device_type == DeviceType.CUDA and cuda_available():
        target = Device(device_type, device_id if device_id < cuda_device_count() else 0)
        arr = arr.to_device(target)
    return arr


def _schema_from_ipc(data: bytes) -> Schema:
    import pyarrow as pa

    ipc_schema = pa.ipc.open_stream(pa.py_buffer(data)).schema
    meta = ipc_schema.metadata or {}
    if meta.get(_IPC_COLUMN.encode()) == b"1":
        return schema(ipc_schema.field(0))
    return schema(ipc_schema)


def _pair(result: object, method: str) -> tuple[object, object]:
    """The (schema, array) capsule pair a producer's array method returned."""
    if not isinstance(result, tuple) or len(result) != 2:
        raise GodevarrowTypeError(
            f"{method}() must return a (schema capsule, array capsule) tuple, got {type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, tuple) else "")
        )
    return result


def _import_array(obj: object, requested_schema: object) -> Array:
    if isinstance(obj, Array):
        arr = obj
    elif hasattr(obj, "__arrow_c_device_array__"):
        s, a = _pair(_ask(obj.__arrow_c_device_array__, requested_schema), "__arrow_c_device_array__")
        arr = Array(_lib.import_array(s, a, True))
    elif hasattr(obj, "__arrow_c_array__"):
        s, a = _pair(_ask(obj.__arrow_c_array__, requested_schema), "__arrow_c_array__")
        arr = Array(_lib.import_array(s, a, False))
    elif hasattr(obj, "__dlpack__"):
        from . import _dlpack

        arr = _dlpack.from_dlpack(obj)
    elif hasattr(obj, "__cuda_array_interface__"):
        from . import _dlpack

        arr = _dlpack.from_cuda_array_interface(obj)
    else:
        raise _no_protocol(
            obj,
            "array",
            "__arrow_c_device_array__, __arrow_c_array__, __dlpack__, __cuda_array_interface__",
        )
    if requested_schema is not None:
        # producers may ignore the request; apply it ourselves (zero-copy when equal)
        arr = Array(_lib.array_cast(arr._h, schema(requested_schema)._h))
    return arr


def array(obj: object, *, requested_schema: object = None) -> Array:
    """An Array from anything that speaks a protocol (see the API docs)."""
    # the common case is one C call that creates the Array (one frame here)
    imported = _lib.import_from(obj, Array, requested_schema)
    arr = _import_array(obj, requested_schema) if imported is NotImplemented else imported
    return arr if type(arr) is Array else Array(arr._h)


def record_batch(obj: object, *, requested_schema: object = None) -> RecordBatch:
    """A RecordBatch: like :func:`array`, but the type must be a struct."""
    imported = _lib.import_from(obj, RecordBatch, requested_schema)
    arr = _import_array(obj, requested_schema) if imported is NotImplemented else imported
    if not arr._is_struct():
        raise ArrowInvalid(
            f"a record batch must have a struct type, but the object exported {arr.schema} "
            f"(format {arr.schema.format!r})"
        )
    return arr if isinstance(arr, RecordBatch) else RecordBatch(arr._h)


# ----------------------------------------------------------------- stream


class ArrayStream:
    """A stream of arrays with one schema on one device type; read once.

    Iterating yields :class:`Array` (:class:`RecordBatch` for struct streams).
    Exporting it (``__arrow_c_stream__``) moves it out: afterwards it cannot be
    read or exported again.
    """

    __slots__ = ("_h", "_info", "__weakref__")

    def __init__(self, handle: Any) -> None:
        # schema, device type and array class are asked for when first
        # needed: a stream handed on unread (the pass-through) never needs
        # them, and a pending stream (docs/design.md, "Streams passed
        # through") would have to move into Go to answer
        self._h = handle
        self._info: Optional[tuple[Schema, int, type[Array]]] = None

    def _stream_info(self) -> tuple[Schema, int, type[Array]]:
        if self._info is None:
            schema_handle, device_type, is_struct = _lib.stream_info(self._h)
            self._info = (Schema(schema_handle), device_type, RecordBatch if is_struct else Array)
        return self._info

    @property
    def schema(self) -> Schema:
        return self._stream_info()[0]

    @property
    def device_type(self) -> DeviceType:
        return DeviceType(self._stream_info()[1])

    def __iter__(self) -> Iterator[Array]:
        return self

    def __next__(self) -> Array:
        try:
            arr = _lib.stream_next(self._h, (self._info or self._stream_info())[2])
        except StreamError as e:
            # a Python producer interrupted by Ctrl-C reports the interrupt as
            # its error: give the user the KeyboardInterrupt they caused
            if "KeyboardInterrupt" in str(e):
                raise KeyboardInterrupt(str(e)) from e
            raise
        if arr is None:
            raise StopIteration
        return arr

    def read_all(self) -> list[Array]:
        """Every remaining array, in order."""
        return list(self)

    def prefetch(self, depth: int = 2) -> ArrayStream:
        """A stream that reads this one ahead in the background.

        Go reads up to ``depth`` arrays ahead on its own thread (the GIL is
        not held while the producer works), so a slow producer and a slow
        consumer overlap. Arrays and errors arrive in the producer's order:
        an error at array k is raised after arrays 0..k-1. This stream is
        moved into the new one; closing the new one stops the reading.
        """
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise GodevarrowTypeError(f"depth must be an int, not {type(depth).__name__}")
        return ArrayStream(_lib.stream_prefetch(self._h, depth))

    def __aiter__(self) -> AsyncIterator[Array]:
        return self

    async def __anext__(self) -> Array:
        """The next array, read in a worker thread so the event loop keeps running."""
        import asyncio

        h = await asyncio.to_thread(_lib.stream_next, self._h)
        if h is None:
            raise StopAsyncIteration
        return self._stream_info()[2](h)

    async def aclose(self) -> None:
        """Close the stream without blocking the event loop."""
        import asyncio

        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> ArrayStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def close(self) -> None:
        """Release the stream (idempotent)."""
        _lib.stream_close(self._h)

    def __enter__(self) -> ArrayStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __reduce__(self) -> Any:
        raise GodevarrowTypeError(
            "an ArrayStream is read once and cannot be pickled; pickle its arrays (read_all()) instead"
        )

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """Move the stream out as an ArrowArrayStream; chunks on a device are copied to the host."""
        return _lib.export_stream(self._h, _requested_handle(requested_schema), False)

    def __arrow_c_device_stream__(self, requested_schema: object = None, **kwargs: Any) -> object:
        """Move the stream out as an ArrowDeviceArrayStream."""
        _check_kwargs("__arrow_c_device_stream__", kwargs)
        return _lib.export_stream(self._h, _requested_handle(requested_schema), True)

    def __repr__(self) -> str:
        return f"godevarrow.ArrayStream<{self.schema}> on {self.device_type.name}"


def stream(obj: object, *, requested_schema: object = None) -> ArrayStream:
    """An ArrayStream from a stream producer, or a one-chunk stream of an Array."""
    if isinstance(obj, ArrayStream):
        st = obj
    elif isinstance(obj, Array):
        st = ArrayStream(_lib.stream_from_arrays([obj._h], None))
    elif hasattr(obj, "__arrow_c_device_stream__"):
        cap = _ask(obj.__arrow_c_device_stream__, requested_schema)
        st = ArrayStream(_lib.import_stream(cap, True))
    elif hasattr(obj, "__arrow_c_stream__"):
        cap = _ask(obj.__arrow_c_stream__, requested_schema)
        st = ArrayStream(_lib.import_stream(cap, False))
    else:
        raise _no_protocol(obj, "stream", "__arrow_c_device_stream__, __arrow_c_stream__")
    if requested_schema is not None:
        target = schema(requested_schema)
        if target != st.schema:
            st = ArrayStream(_lib.stream_cast(st._h, target._h))
    return st


def stream_of(arrays: Sequence[Array], schema_: Optional[Schema] = None) -> ArrayStream:
    """A stream over arrays already in memory (all of one type and device)."""
    return ArrayStream(_lib.stream_from_arrays([a._h for a in arrays], None if schema_ is None else schema_._h))


# ------------------------------------------------------------ module-level


def to_pyarrow(obj: object) -> Any:
    """The pyarrow equivalent: RecordBatch → pyarrow.RecordBatch, Array →
    pyarrow.Array, ArrayStream → pyarrow.RecordBatchReader, Schema →
    pyarrow.Schema/Field."""
    if isinstance(obj, (Array, Schema)):
        return obj.to_pyarrow()
    if isinstance(obj, ArrayStream):
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(obj)
    raise GodevarrowTypeError(f"to_pyarrow() takes a godevarrow object, not {type(obj).__name__}")


def slice(obj: Array, offset: int = 0, length: Optional[int] = None) -> Array:  # noqa: A001
    """``obj.slice(offset, length)``."""
    return obj.slice(offset, length)


def validate(obj: Array, full: bool = True) -> None:
    """``obj.validate(full)``."""
    obj.validate(full)


def cuda_status() -> tuple[bool, int, str, str]:
    """(available, device count, driver library, message) of the CUDA backend.

    The driver is ``libcuda.so.1``, or the library named by the environment
    variable ``GODEVARROW_LIBCUDA``; it is opened on first use."""
    try:
        return _lib.cuda_status()
    except Exception as exc:  # never raise from a status query
        return False, 0, "", f"CUDA status unavailable: {exc}"


def cuda_available() -> bool:
    """Whether a CUDA driver with at least one device can be used. Never raises."""
    ok, count, _, _ = cuda_status()
    return ok and count > 0


def cuda_device_count() -> int:
    """The number of CUDA devices (0 without a driver). Never raises."""
    return cuda_status()[1]


_COUNTER_NAMES = (
    "handles",
    "exported_schemas",
    "exported_arrays",
    "exported_streams",
    "imported_arrays",
    "imported_streams",
    "bytes_held",
    "arrays",
    "exported_tensors",
    "held_imports",
)


def debug_live_objects() -> dict[str, int]:
    """Live objects of the Go core, for leak checks: every counter returns to
    its baseline once Python dropped its objects and every consumer released
    what it was given."""
    return dict(zip(_COUNTER_NAMES, _lib.debug_counters()))

"""Array and RecordBatch, and the constructors array() and record_batch().

The exchange protocols of an Array (``__arrow_c_device_array__``,
``__arrow_c_array__``, ``__arrow_c_schema__``) are implemented in C by its
base class, ``_godevarrow.ArrayBase``; the import of the Arrow protocols,
in their order, is ``_godevarrow.import_from``. This module adds the rest:
properties, the tensor protocols, pickling, and operations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union, cast

from . import _dlpack, _ipc, _repr
from . import _godevarrow as _lib
from ._device import Device, DeviceLike, DeviceType, as_device, device_count, device_of, device_traits
from ._godevarrow import ArrowInvalid, GodevarrowTypeError
from ._optional import pandas_frame, require
from ._protocol import check_kwargs, no_protocol, producer_error, schema_capsule
from ._schema import Schema, column_index, requested_handle, schema
from ._values import MAKERS, Columns, Values

if TYPE_CHECKING:  # pragma: no cover
    from types import NotImplementedType

    import pandas
    import pyarrow
    from typing_extensions import CapsuleType  # (numpy's from_dlpack protocol asks for it)

_A = TypeVar("_A", bound="Array")


class Array(Values, _lib.ArrayBase):
    """An Arrow array whose buffers live on a device; zero-copy.

    Make one with `godevarrow.array`. A struct-typed Array is a record
    batch (`RecordBatch`).
    """

    __slots__ = ("__weakref__",)

    # -- properties
    @property
    def schema(self) -> Schema:
        """The array's field: its type, name, nullability and metadata."""
        return Schema(_lib.schema_of(self._h))

    @property
    def device(self) -> Device:
        """Where the buffers live (`Device.cpu()`, `Device.cuda(n)`, ...)."""
        info = self._get_info()
        return device_of(info.device_type, info.device_id)

    @property
    def device_type(self) -> DeviceType:
        """The kind of device the buffers live on."""
        return DeviceType(self._get_info().device_type)

    @property
    def device_id(self) -> int:
        """Which device of its type (-1 for the CPU)."""
        return self._get_info().device_id

    def __len__(self) -> int:
        """The number of elements (rows, for a record batch)."""
        return self._get_info().length

    @property
    def offset(self) -> int:
        """The logical offset into the buffers (non-zero for a slice)."""
        return self._get_info().offset

    @property
    def null_count(self) -> int:
        """The number of nulls; -1 when unknown and the data is on a device."""
        return self._get_info().null_count

    # -- protocols (__arrow_c_schema__ and __arrow_c_device_array__: see ArrayBase)
    def _c_device_array_requested(self, requested_schema: object = None, **kwargs: Any) -> tuple[object, object]:
        # __arrow_c_device_array__ with a requested schema or keywords
        check_kwargs("__arrow_c_device_array__", kwargs)
        return _lib.export_array(self._h, requested_handle(requested_schema), True)

    def _c_array_slow(self, requested_schema: object = None) -> tuple[object, object]:
        # __arrow_c_array__ of data on a device (copied to the host) or with a request
        return _lib.export_array(self._on_host()._h, requested_handle(requested_schema), False)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """A one-chunk stream (copied to the host when on another device)."""
        one = _lib.stream_from_arrays([self._on_host()._h], None)
        return _lib.export_stream(one, requested_handle(requested_schema), False)

    def __arrow_c_device_stream__(self, requested_schema: object = None, **kwargs: Any) -> object:
        """A one-chunk device stream."""
        check_kwargs("__arrow_c_device_stream__", kwargs)
        return _lib.export_stream(_lib.stream_from_arrays([self._h], None), requested_handle(requested_schema), True)

    def _on_host(self: _A) -> _A:
        return self if self.device_type == DeviceType.CPU else self.to_device("cpu")

    # -- pickling
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as Arrow IPC: device data is copied to the host, and put
        back on the same kind of device when the loading process has one."""
        pa = require("pyarrow", "pickling a godevarrow array")

        host = self._on_host()
        if host._is_struct():
            data = _ipc.batch_bytes(pa.record_batch(host))
        else:
            # through a one-column batch made in Go: pyarrow has no Python
            # class for some array types (month intervals) but reads any batch
            data = _ipc.batch_bytes(pa.record_batch(RecordBatch(_lib.array_as_batch(host._h))), single_column=True)
        return (_array_from_ipc, (data, int(self.device_type), self.device_id))

    # -- DLPack and the CUDA Array Interface
    # __dlpack__ and __dlpack_device__ are ArrayBase's (C): the common call,
    # the array where it is, is answered there; the rest comes here
    def _dlpack_general(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[tuple[int, int]] = None,
        dl_device: Optional[tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> CapsuleType:
        """``__dlpack__`` with a ``dl_device`` or ``copy=True``."""
        capsule = _dlpack.export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        return cast("CapsuleType", capsule)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 of a 1-D numeric CUDA array without nulls
        (AttributeError for arrays that are not in CUDA device memory)."""
        return _dlpack.cuda_array_interface(self)

    # -- operations
    def slice(self: _A, offset: int = 0, length: Optional[int] = None) -> _A:
        """A zero-copy slice of ``length`` elements from ``offset``; as in
        pyarrow, a slice past the end is shorter (or empty)."""
        start, n = clamp_slice(offset, length, len(self))
        return type(self)(_lib.array_slice(self._h, start, n))

    def to_device(self: _A, device: DeviceLike) -> _A:
        """A copy on ``device`` (the same object when already there). A copy
        to the host is complete when this returns; a copy to a device is
        ordered by the event it carries, which its exports hand on (the C
        Device Data Interface's ``sync_event``) and every consumer waits for,
        so this does not wait for the device. Device memory for it comes from
        a pool of freed blocks (up to 64 MiB idle per device; docs/cuda.md)."""
        target = as_device(device)
        info = self._get_info()
        device_type, device_id = target._key
        if device_type == info.device_type and device_id == info.device_id:
            return self
        return self._to_device(device_type, device_id)

    def to_pyarrow(self) -> pyarrow.Array:
        """A ``pyarrow.Array`` (zero-copy for CPU data, else a copy to the host)."""
        pa = require("pyarrow", "to_pyarrow()")

        return pa.array(self._on_host())

    def validate(self, full: bool = True) -> None:
        """Raise ``ValueError`` (``ArrowInvalid``) describing the first problem found."""
        _lib.array_validate(self._h, full)

    # -- looking at values (Values: to_pylist, [], iteration, ==, repr)
    def _values(self, start: int, n: int) -> list[Any]:
        return _lib.array_values(self._h, start, n, MAKERS, False)  # type: ignore[no-any-return]

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Whether ``other`` (an Array, or anything `godevarrow.array` reads)
        holds the same values of the same type; nulls, NaNs (never equal) and
        nested types as pyarrow's ``equals``. ``check_metadata`` compares the
        fields' metadata too. Device data is compared on the host (a copy)."""
        other = other if isinstance(other, Array) else array(other)
        return _lib.equal(self._h, other._h, check_metadata)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        """numpy's view of a numeric array without nulls: zero-copy for host
        data (numpy's own ``from_dlpack``); device data is copied to the host
        unless ``copy=False``. Other arrays raise ``ArrowInvalid`` (never a
        silent object array): use ``to_pylist()`` or pyarrow's ``to_numpy``."""
        np = require("numpy", "numpy conversion")
        info = self._get_info()
        host = self
        if info.device_type != DeviceType.CPU:
            if copy is False:
                raise ArrowInvalid(
                    f"the array is on {self.device}: a numpy array of it needs a copy (copy=False given)"
                )
            host = self.to_device("cpu")

        def refuse(problem: str) -> ArrowInvalid:
            return ArrowInvalid(
                f"cannot make a numpy array of this godevarrow array ({self.schema}): {problem}; "
                "use to_pylist(), or pyarrow's to_numpy(zero_copy_only=False)"
            )

        if host._is_struct():
            raise ArrowInvalid(
                f"cannot make a numpy array of this godevarrow record batch or table ({self.schema}): a struct "
                "has no single numpy dtype. For a pandas DataFrame use .to_pandas() (through pyarrow) or, "
                "with pandas 3, pandas.DataFrame.from_arrow(...); for Python values, to_pylist() or to_pydict()"
            )
        if host.null_count:
            raise refuse(f"it has {host.null_count} nulls, which numpy cannot hold without a copy")
        try:
            out = np.from_dlpack(host)
        except (BufferError, TypeError, ValueError) as e:
            raise refuse("only fixed-width numbers are viewed as numpy arrays without a copy") from e
        if dtype is not None:
            out = out.astype(dtype, copy=bool(copy))
        elif copy:
            out = out.copy()
        return out

    def _repr_head(self) -> str:
        return f"godevarrow.{type(self).__name__}<{self.schema}>[{len(self)}] on {self.device}"


def clamp_slice(offset: int, length: Optional[int], n: int) -> tuple[int, int]:
    """pyarrow's slice rule: a negative offset is an error, an offset or
    length past the end is clamped to it."""
    for name, v in (("offset", offset), ("length", length)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise GodevarrowTypeError(f"slice {name} must be an int, not {type(v).__name__}")
    if offset < 0:
        raise IndexError(f"slice offset must be non-negative, got {offset}")
    if length is not None and length < 0:
        raise IndexError(f"slice length must be non-negative, got {length}")
    start = min(offset, n)
    return start, n - start if length is None else min(length, n - start)


class RecordBatch(Array, Columns[Array]):
    """A struct-typed Array whose children are the columns."""

    __slots__ = ()

    @property
    def num_columns(self) -> int:
        """The number of columns (the struct's fields)."""
        return self._get_info().n_children

    def column(self, i: Union[int, str]) -> Array:
        """Column ``i`` (an index, or a name) as an Array; zero-copy."""
        return Array(_lib.array_column(self._h, column_index(self.column_names, i)))

    def __getitem__(self, key: Any) -> Any:
        """``batch[i]`` is row i as a dict, ``batch[a:b]`` a zero-copy slice,
        ``batch["name"]`` the column of that name."""
        if isinstance(key, str):
            return self.column(key)
        return super().__getitem__(key)

    def __repr__(self) -> str:
        """The shape and device, the schema, then each column's first and last
        values (only those are read), as pyarrow prints them."""
        return self._render_columns(
            "godevarrow.RecordBatch: " + _repr.shape(len(self), self.num_columns, None, str(self.device))
        )

    def to_pydict(self) -> dict[str, list[Any]]:
        """Each column's values (``to_pylist``) by column name."""
        return _lib.array_values(self._h, 0, len(self), MAKERS, True)  # type: ignore[no-any-return]

    def to_pyarrow(self) -> pyarrow.RecordBatch:
        """A ``pyarrow.RecordBatch`` (zero-copy for CPU data, else a copy to the host)."""
        pa = require("pyarrow", "to_pyarrow()")

        return pa.record_batch(self._on_host())

    def to_pandas(self, **kwargs: Any) -> pandas.DataFrame:
        """A ``pandas.DataFrame``, through pyarrow: ``to_pyarrow().to_pandas(**kwargs)``
        (see `Table.to_pandas`)."""
        return pandas_frame(self, kwargs)


def _array_from_ipc(data: bytes, device_type: int, device_id: int) -> Array:
    batch, single = _ipc.read_batch(data)
    arr: Array = record_batch(batch).column(0) if single else record_batch(batch)
    # back onto device memory when this process has such a device (else the host copy)
    if device_traits(device_type).device_memory and (count := device_count(device_type)) > 0:
        arr = arr.to_device(Device(device_type, device_id if device_id < count else 0))
    return arr


def _import(obj: object, cls: type[_A], requested_schema: object) -> Array:
    """obj as an Array of class cls: through the Arrow protocols in one C
    call (import_from, which asks the producer with the requested schema),
    else as it is (one of ours), through DLPack or the CUDA Array Interface;
    then the requested schema is applied, since producers may ignore it."""
    imported = _by_protocol(obj, cls, requested_schema)
    arr: Array = _without_arrow_protocol(obj, cls) if imported is NotImplemented else imported
    if requested_schema is not None:
        arr = cls(_lib.array_cast(arr._h, schema(requested_schema)._h))  # zero-copy when equal
    return arr


def _without_arrow_protocol(obj: object, cls: type[_A]) -> Array:
    """obj, which offers no Arrow protocol, as an Array: as it is (one of
    ours), else through DLPack or the CUDA Array Interface."""
    try:
        if isinstance(obj, Array):
            return obj
        if hasattr(obj, "__dlpack__"):
            return _dlpack.from_dlpack(obj, cls)
        if hasattr(obj, "__cuda_array_interface__"):
            return cls(_dlpack.from_cuda_array_interface(obj))
        raise no_protocol(
            obj, "array", "__arrow_c_device_array__, __arrow_c_array__, __dlpack__, __cuda_array_interface__"
        )
    except Exception as e:
        raise producer_error(obj, e)  # noqa: B904 (the cause is set; ours pass unchanged)


def _by_protocol(obj: object, cls: type[_A], requested_schema: object) -> Union[_A, NotImplementedType]:
    """``import_from``: obj as a cls instance through the Arrow protocols, or
    NotImplemented; a producer's exception as the package's (producer_error)."""
    try:
        return _lib.import_from(obj, cls, None if requested_schema is None else schema_capsule(requested_schema))
    except Exception as e:
        raise producer_error(obj, e)  # noqa: B904 (the cause is set)


def array(obj: object, *, requested_schema: object = None) -> Array:
    """An Array from anything that speaks a protocol (see the API docs)."""
    if requested_schema is None:  # the common case: one C call makes the Array
        # _by_protocol inline: a Python call is a measurable share of this path
        # (docs/benchmarks.md, the "import only ..., 1 int64 column" row)
        try:
            imported = _lib.import_from(obj, Array, None)
        except Exception as e:
            raise producer_error(obj, e)  # noqa: B904 (the cause is set)
        if imported is not NotImplemented:
            return imported
        # no Arrow protocol: asking the producer again (_import) would only repeat that
        arr = _without_arrow_protocol(obj, Array)
    else:
        arr = _import(obj, Array, requested_schema)
    return arr if type(arr) is Array else Array(arr._h)


def record_batch(obj: object, *, requested_schema: object = None) -> RecordBatch:
    """A RecordBatch: like `array`, but the type must be a struct."""
    try:  # _by_protocol inline, as in array()
        imported = _lib.import_from(obj, RecordBatch, None) if requested_schema is None else NotImplemented
    except Exception as e:
        raise producer_error(obj, e)  # noqa: B904 (the cause is set)
    arr: Array
    if imported is not NotImplemented:
        arr = imported
    elif requested_schema is None:  # no Arrow protocol: asking again would only repeat that
        arr = _without_arrow_protocol(obj, RecordBatch)
    else:
        arr = _import(obj, RecordBatch, requested_schema)
    if not arr._is_struct():
        raise ArrowInvalid(
            f"a record batch must have a struct type, but the object exported {arr.schema} "
            f"(format {arr.schema.format!r})"
        )
    return arr if isinstance(arr, RecordBatch) else RecordBatch(arr._h)

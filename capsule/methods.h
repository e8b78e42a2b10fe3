// The method table of godevarrow._godevarrow, declared once:
// X(name, poison, docstring signature, stub signature).
//
// module.c expands it into the method table (each entry calls m_<name>,
// after refusing work when poisoned is REFUSE and the library is poisoned);
// capsule/gen_stub.py reads it to write python/godevarrow/_godevarrow.pyi,
// and tests_py/binding/test_binding.py checks that the stub file is in step. Adding
// a method is one line here, its m_<name> wrapper, and its Go export.
//
// Every method is METH_FASTCALL with positional arguments. A wrapper unpacks
// them, makes one call into Go (or into held.h), and packs the result.
#pragma once

// clang-format off
#define GDA_METHODS(X) \
  X(import_schema, REFUSE, "import_schema(capsule, consume) -> handle", "(capsule: _Capsule, consume: bool, /) -> _Handle") \
  X(import_from, REFUSE, "import_from(obj, cls, requested_schema_capsule) -> cls instance, or NotImplemented when obj has no Arrow array protocol", "(obj: object, cls: type[_A], requested_schema: Optional[_Capsule], /) -> Union[_A, NotImplementedType]") \
  X(import_array, REFUSE, "import_array(schema_capsule, array_capsule, device) -> handle", "(schema_capsule: _Capsule, array_capsule: _Capsule, device: bool, /) -> _Handle") \
  X(import_stream, REFUSE, "import_stream(capsule, device) -> stream handle", "(capsule: _Capsule, device: bool, /) -> _Handle") \
  X(import_stream_from, REFUSE, "import_stream_from(obj, requested_schema_capsule) -> stream handle, or NotImplemented when obj has no Arrow stream protocol", "(obj: object, requested_schema: Optional[_Capsule], /) -> Union[_Handle, NotImplementedType]") \
  X(export_schema, REFUSE, "export_schema(handle) -> capsule", "(handle: _Handle, /) -> _Capsule") \
  X(export_array, REFUSE, "export_array(handle, requested_schema_handle, device) -> (schema_capsule, array_capsule)", "(handle: _Handle, requested_schema: Optional[_Handle], device: bool, /) -> tuple[_Capsule, _Capsule]") \
  X(export_stream, REFUSE, "export_stream(handle, requested_schema_handle, device) -> capsule (moves the stream)", "(handle: _Handle, requested_schema: Optional[_Handle], device: bool, /) -> _Capsule") \
  X(array_info, REFUSE, "array_info(handle) -> ArrayInfo", "(handle: _Handle, /) -> ArrayInfo") \
  X(schema_of, REFUSE, "schema_of(handle) -> schema handle", "(handle: _Handle, /) -> _Handle") \
  X(schema_info, REFUSE, "schema_info(handle) -> SchemaInfo", "(handle: _Handle, /) -> SchemaInfo") \
  X(schema_child, REFUSE, "schema_child(handle, i) -> handle (i=-1: dictionary)", "(handle: _Handle, i: int, /) -> _Handle") \
  X(schema_equal, REFUSE, "schema_equal(a, b) -> bool", "(a: _Handle, b: _Handle, /) -> bool") \
  X(schema_str, REFUSE, "schema_str(handle) -> str", "(handle: _Handle, /) -> str") \
  X(array_slice, REFUSE, "array_slice(handle, offset, length) -> handle", "(handle: _Handle, offset: int, length: int, /) -> _Handle") \
  X(array_column, REFUSE, "array_column(handle, i) -> handle", "(handle: _Handle, i: int, /) -> _Handle") \
  X(array_validate, REFUSE, "array_validate(handle, full)", "(handle: _Handle, full: bool, /) -> None") \
  X(array_cast, REFUSE, "array_cast(handle, schema_handle) -> handle", "(handle: _Handle, schema: _Handle, /) -> _Handle") \
  X(array_with_validity, REFUSE, "array_with_validity(handle, validity_handle, null_count) -> handle", "(handle: _Handle, validity: _Handle, null_count: int, /) -> _Handle") \
  X(array_as_batch, REFUSE, "array_as_batch(handle) -> handle (a one-column record batch, zero-copy)", "(handle: _Handle, /) -> _Handle") \
  X(array_copy, REFUSE, "array_copy(handle) -> handle (a copy on the same device)", "(handle: _Handle, /) -> _Handle") \
  X(array_known_null_counts, REFUSE, "array_known_null_counts(handle) -> handle (every unknown null count counted; device data: a count on the device's data)", "(handle: _Handle, /) -> _Handle") \
  X(stream_info, REFUSE, "stream_info(handle) -> StreamInfo", "(handle: _Handle, /) -> StreamInfo") \
  X(stream_next, REFUSE, "stream_next(handle, cls) -> the next array as a cls instance, or None at the end", "(handle: _Handle, cls: type[_A], /) -> Optional[_A]") \
  X(stream_loop_read, REFUSE, "stream_loop_read(handle, cls) -> the next array for an event loop: a ready one, or one read in the loop's thread while the stream's reads are fast; None at the end, NotImplemented when the loop must wait for the wake pipe", "(handle: _Handle, cls: type[_A], /) -> Union[_A, None, NotImplementedType]") \
  X(stream_try_next, REFUSE, "stream_try_next(handle, cls) -> the next array if one is ready now, None at the end, NotImplemented when none is ready (read-ahead streams only)", "(handle: _Handle, cls: type[_A], /) -> Union[_A, None, NotImplementedType]") \
  X(stream_set_wake, REFUSE, "stream_set_wake(handle, fd): the write end of the caller's non-blocking wake pipe (a read-ahead stream's; the caller closes it after closing the stream)", "(handle: _Handle, fd: int, /) -> None") \
  X(stream_arm_wake, REFUSE, "stream_arm_wake(handle, on): one byte on the wake pipe at the next array or the end (on=False: disarm)", "(handle: _Handle, on: bool, /) -> None") \
  X(stream_anext, REFUSE, "stream_anext(stream, handle, cls) -> the awaitable of one ArrayStream.__anext__ of a read-ahead stream (a ready array at once, else stream._anext_wait())", "(stream: object, handle: _Handle, cls: type[_A], /) -> StreamAnext[_A]") \
  X(stream_aiter, REFUSE, "stream_aiter(stream, handle, cls) -> an asynchronous iterator over the read-ahead stream behind handle (its __anext__ is stream_anext's)", "(stream: object, handle: _Handle, cls: type[_A], /) -> StreamAsyncIterator[_A]") \
  X(stream_prefetch, REFUSE, "stream_prefetch(handle, depth, when_slow) -> stream handle (moves the stream; when_slow: read ahead only once a read blocks)", "(handle: _Handle, depth: int, when_slow: bool, /) -> _Handle") \
  X(stream_cast, REFUSE, "stream_cast(handle, schema_handle) -> stream handle (moves the stream)", "(handle: _Handle, schema: _Handle, /) -> _Handle") \
  X(stream_from_arrays, REFUSE, "stream_from_arrays(handles, schema_handle) -> stream handle", "(handles: Sequence[_Handle], schema: Optional[_Handle], /) -> _Handle") \
  X(array_values, REFUSE, "array_values(handle, start, length, makers, by_column) -> the values of [start, start+length) as Python objects: a list, or a dict of column lists (by_column); makers: values.h", "(handle: _Handle, start: int, length: int, makers: tuple[Any, ...], by_column: bool, /) -> Any") \
  X(equal, REFUSE, "equal(a, b, check_metadata) -> bool (value equality of two arrays or two chunked arrays)", "(a: _Handle, b: _Handle, check_metadata: bool, /) -> bool") \
  X(chunked_from_arrays, REFUSE, "chunked_from_arrays(handles, schema_handle) -> chunked array handle", "(handles: Sequence[_Handle], schema: Optional[_Handle], /) -> _Handle") \
  X(chunked_read, REFUSE, "chunked_read(stream_handle) -> chunked array handle (reads the stream to its end; moves it)", "(handle: _Handle, /) -> _Handle") \
  X(chunked_info, REFUSE, "chunked_info(handle) -> ChunkedInfo", "(handle: _Handle, /) -> ChunkedInfo") \
  X(chunked_chunk, REFUSE, "chunked_chunk(handle, i) -> array handle", "(handle: _Handle, i: int, /) -> _Handle") \
  X(chunked_stream, REFUSE, "chunked_stream(handle) -> stream handle (a fresh stream over the chunks)", "(handle: _Handle, /) -> _Handle") \
  X(chunked_slice, REFUSE, "chunked_slice(handle, offset, length) -> chunked array handle", "(handle: _Handle, offset: int, length: int, /) -> _Handle") \
  X(chunked_column, REFUSE, "chunked_column(handle, i) -> chunked array handle", "(handle: _Handle, i: int, /) -> _Handle") \
  X(chunked_to_device, REFUSE, "chunked_to_device(handle, device_type, device_id) -> chunked array handle", "(handle: _Handle, device_type: int, device_id: int, /) -> _Handle") \
  X(chunked_validate, REFUSE, "chunked_validate(handle, full)", "(handle: _Handle, full: bool, /) -> None") \
  X(dlpack_export, REFUSE, "dlpack_export(handle, versioned, copied, stream) -> capsule: stream as __dlpack__ got it", "(handle: _Handle, versioned: bool, copied: bool, stream: Optional[int], /) -> _Capsule") \
  X(dlpack_import, REFUSE, "dlpack_import(capsule) -> handle: the tensor imported with no stream named (tests)", "(capsule: _Capsule, /) -> _Handle") \
  X(dlpack_import_from, REFUSE, "dlpack_import_from(obj, cls) -> cls instance through obj's __dlpack__, or NotImplemented without one", "(obj: object, cls: type[_A], /) -> Union[_A, NotImplementedType]") \
  X(dlpack_device, REFUSE, "dlpack_device(handle) -> (device_type, device_id)", "(handle: _Handle, /) -> tuple[int, int]") \
  X(dlpack_consumer_stream, REFUSE, "dlpack_consumer_stream(device_type, device_id) -> (stream, pooled): the stream to name to a producer's __dlpack__ (dlpack.StreamForProducer; None: no stream argument), and whether it is a pooled one (given back at once)", "(device_type: int, device_id: int, /) -> tuple[Optional[int], bool]") \
  X(device_traits, ALWAYS, "device_traits(device_type) -> (host_accessible, streams, device_memory): the backend's traits (all False without a backend)", "(device_type: int, /) -> tuple[bool, bool, bool]") \
  X(device_count, ALWAYS, "device_count(device_type) -> int: the devices of the type's backend (0 without a backend or driver)", "(device_type: int, /) -> int") \
  X(tensor_info, REFUSE, "tensor_info(handle, ready) -> TensorInfo", "(handle: _Handle, ready: bool, /) -> TensorInfo") \
  X(schema_borrowed, REFUSE, "schema_borrowed(schema_capsule) -> capsule (a shallow copy whose release frees nothing; the given capsule must outlive it)", "(schema_capsule: _Capsule, /) -> _Capsule") \
  X(device_array_stamp_device_of_data, REFUSE, "device_array_stamp_device_of_data(device_array_capsule) (device_id from the device of the first buffer)", "(device_array_capsule: _Capsule, /) -> None") \
  X(wrap_cuda_pointer, REFUSE, "wrap_cuda_pointer(owner, format, data, length, stream) -> handle", "(owner: object, format: str, data: int, length: int, stream: int, /) -> _Handle") \
  X(checksums, REFUSE, "checksums(handle) -> list[int]", "(handle: _Handle, /) -> list[int]") \
  X(go_functions, ALWAYS, "go_functions() -> str (the Go functions of this build, as JSON)", "() -> str") \
  X(go_call, REFUSE, "go_call(name, args, classes, cancellable, as_given) -> the Go function's result (classes: Array, RecordBatch, ChunkedArray, Table, ArrayStream; cancellable: it takes a context, which Ctrl-C cancels; as_given: NotImplemented when an argument must be converted first)", "(name: str, args: tuple[Any, ...], classes: tuple[type, type, type, type, type], cancellable: bool, as_given: bool, /) -> Any") \
  X(cuda_status, ALWAYS, "cuda_status() -> CudaStatus", "() -> CudaStatus") \
  X(build_info, ALWAYS, "build_info() -> str", "() -> str") \
  X(debug_counters, ALWAYS, "debug_counters() -> Counters", "() -> Counters") \
  X(debug_release_pools, ALWAYS, "debug_release_pools(): gives the idle resources of the device backends' pools (pinned staging memory) back to their drivers", "() -> None") \
  X(debug_known_schemas, ALWAYS, "debug_known_schemas() -> (type, schema)", "() -> tuple[Any, Any]") \
  X(debug_panic, REFUSE, "debug_panic(): test-only, needs GODEVARROW_ALLOW_PANIC_TEST=1", "() -> None")
// clang-format on

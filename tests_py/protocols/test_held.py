"""Held imports (docs/design.md, "Held imports"): a CPU import whose schema is
cached and whose array passes the import's checks stays in C as the producer
made it; exporting it again is a shallow copy made in C, and Go builds its
Array only when Go code reads it. Each test checks that a held array behaves
exactly like one imported by Go, and that the producer's release runs once."""

import gc

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from cabi import ArrowArray
from conftest import ArrayOnly, DeviceArrayOnly, live

pytestmark = pytest.mark.usefixtures("leak_check")


def _buffer_addresses(arr: pa.Array) -> list[int]:
    return [b.address for b in arr.buffers() if b is not None]


@pytest.mark.parametrize("offer", [ArrayOnly, DeviceArrayOnly, lambda a: a], ids=["array", "device", "both"])
def test_a_pass_through_is_held_and_builds_no_go_array(offer):
    src = pa.array(np.arange(100, dtype=np.int64))
    held_before, go_arrays_before = live("held_imports"), live("arrays")
    arr = gda.array(offer(src))
    assert live("held_imports") == held_before + 1
    back = pa.array(arr)
    assert live("arrays") == go_arrays_before  # import and export never built Go data
    assert back.equals(src)
    assert _buffer_addresses(back) == _buffer_addresses(src)  # zero-copy both ways
    del arr
    gc.collect()
    assert back.sum().as_py() == 4950  # the export keeps the producer's array alive
    del back
    assert live("held_imports") == held_before


def test_the_first_import_of_a_schema_is_held_too():
    # a schema never seen before is cached on the way (one extra Go call)
    fresh = pa.array([1, 2], pa.int16())
    before = live("held_imports")
    arr = gda.array(pa.record_batch({"never_seen_column_xyzzy": fresh}))
    assert live("held_imports") == before + 1
    assert pa.record_batch(arr).column(0).to_pylist() == [1, 2]


@pytest.mark.parametrize(
    "src",
    [
        pa.array([1, None, 3], pa.int32()),
        pa.array([True, None, False]),
        pa.array(["a", None, "ccc"]),
        pa.array([b"x", b"yy"], pa.large_binary()),
        pa.array([[1, 2], None, [3]], pa.list_(pa.int8())),
        pa.array([[1], [2, 3]], pa.large_list(pa.float64())),
        pa.array([[1, 2], [3, 4]], pa.list_(pa.int64(), 2)),
        pa.array([{"a": 1, "b": "x"}, None]),
        pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int32())),
        pa.array(["a", "b", "a"]).dictionary_encode(),
        pa.nulls(3),
        pa.array(np.arange(10, dtype=np.int64)).slice(3, 4),
        pa.array([{"a": 1}, {"a": 2}, {"a": 3}]).slice(1, 2),
    ],
    ids=lambda a: str(a.type),
)
def test_held_arrays_round_trip_every_gate_layout(src):
    gda.array(src)  # cache the schema
    before = live("held_imports")
    arr = gda.array(src)
    assert live("held_imports") == before + 1
    back = pa.array(arr)
    assert back.type == src.type and back.to_pylist() == src.to_pylist()
    back.validate(full=True)


@pytest.mark.parametrize(
    "src",
    [
        pa.array(["a", "bb"], pa.string_view()),
        pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array([1, 2], pa.int8())),
        pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])]),
        pa.array([[1], [2, 3]], pa.list_view(pa.int16())),
    ],
    ids=lambda a: str(a.type),
)
def test_layouts_the_gate_does_not_check_take_the_go_import(src):
    gda.array(src)
    before = live("held_imports")
    arr = gda.array(src)
    assert live("held_imports") == before
    assert pa.array(arr).to_pylist() == src.to_pylist()


def test_reading_a_held_array_builds_its_go_array_once():
    gda.array(pa.array([1, 2, 3]))
    arr = gda.array(pa.array([1, None, 3]))
    before = live("arrays")
    assert (len(arr), arr.null_count) == (3, 1)
    assert live("arrays") == before + 1
    assert arr.slice(1, 2).to_pyarrow().to_pylist() == [None, 3]
    assert live("arrays") == before + 1  # the slice is gone, the array stays
    assert pa.array(arr).to_pylist() == [1, None, 3]  # still exported in C after Go read it


def test_a_held_record_batch_is_a_record_batch_without_go():
    batch = pa.record_batch({"a": [1, 2], "b": ["x", "y"]})
    gda.record_batch(batch)
    before = live("arrays")
    rb = gda.record_batch(batch)
    assert isinstance(rb, gda.RecordBatch)
    assert live("arrays") == before
    assert pa.record_batch(rb).equals(batch)
    with pytest.raises(gda.ArrowInvalid, match="struct"):
        gda.record_batch(pa.array([1, 2]))
    # dictionary-encoded structs are arrays, not batches: held or not
    encoded = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int8()), pa.array([{"a": 1}, {"a": 2}]))
    for _ in range(2):
        with pytest.raises(gda.ArrowInvalid, match="struct"):
            gda.record_batch(encoded)
    assert not gda.array(encoded)._is_struct()


def test_children_of_a_held_export_outlive_their_parent():
    batch = pa.record_batch({"a": np.arange(5), "b": np.arange(5) * 2})
    gda.record_batch(batch)
    rb = gda.record_batch(batch)
    back = pa.record_batch(rb)
    column = back.column(1)  # pyarrow keeps the child, drops the parent struct
    del rb, back
    gc.collect()
    assert column.to_pylist() == [0, 2, 4, 6, 8]


def test_a_held_array_outlives_the_schema_table():
    src = pa.array([7, 8, 9], pa.uint16())
    gda.array(src)
    arr = gda.array(src)
    assert live("held_imports") >= 1
    for i in range(300):  # more distinct schemas than the table keeps
        gda.record_batch(pa.record_batch({f"col{i}": [i]}))
    assert pa.array(arr).to_pylist() == [7, 8, 9]
    assert arr.to_pyarrow().to_pylist() == [7, 8, 9]


def test_schema_capsule_of_a_held_array():
    src = pa.array([1.5], pa.float32())
    gda.array(src)
    arr = gda.array(src)
    before = live("arrays")
    assert pa.DataType._import_from_c_capsule(arr.__arrow_c_schema__()) == pa.float32()
    assert live("arrays") == before  # answered from the held schema


def test_malformed_arrays_are_declined_by_the_gate_with_the_go_error():
    good = pa.array([1, 2, 3], pa.int32())
    gda.array(good)  # the schema is cached: the next import reaches the gate

    class NullCountTooLarge:
        def __arrow_c_array__(self, requested_schema=None):
            import ctypes

            schema, array = good.__arrow_c_array__()
            ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
            ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
            p = ctypes.pythonapi.PyCapsule_GetPointer(array, b"arrow_array")
            ctypes.c_int64.from_address(p + ArrowArray.null_count.offset).value = 4  # null_count > length
            return schema, array

    before = live("held_imports")
    with pytest.raises(gda.ArrowInvalid, match="null_count 4 exceeds length 3"):
        gda.array(NullCountTooLarge())
    assert live("held_imports") == before


def test_a_type_arrow_go_cannot_build_is_reported_not_held():
    # found by fuzzing the held-schema table: Arrow Go has no fixed-size list of 0 values
    src = pa.array([[], []], pa.list_(pa.int8(), 0))
    before = live("held_imports")
    for _ in range(2):
        with pytest.raises(gda.ArrowNotImplementedError, match="fixed-size list of 0 values"):
            gda.array(src)
    assert live("held_imports") == before

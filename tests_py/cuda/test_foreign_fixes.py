"""The two work-arounds the cuDF bridge applies to a producer's capsule
(gosrc/cdevice/foreign_fixes.go), tested on their own: a borrowed schema
whose release frees nothing, and a CUDA device array stamped with the
device of its data."""

from __future__ import annotations

import fakecuda as fake
import godevarrow as gda
import pyarrow as pa
import pytest
from godevarrow import _godevarrow as _lib

SCHEMA = pa.schema([("x", pa.int64()), ("s", pa.string())])


def test_a_borrowed_schema_reads_as_the_original_and_frees_nothing(leak_check):
    keep = SCHEMA.__arrow_c_schema__()
    for _ in range(3):
        borrowed = _lib.schema_borrowed(keep)
        assert pa.Schema._import_from_c_capsule(borrowed) == SCHEMA  # pyarrow moves it and releases it
        del borrowed
    assert pa.Schema._import_from_c_capsule(keep) == SCHEMA  # the original is still whole


def test_a_borrowed_schema_dropped_unread_frees_nothing_either(leak_check):
    keep = SCHEMA.__arrow_c_schema__()
    borrowed = _lib.schema_borrowed(keep)
    del borrowed  # the capsule's destructor runs the no-op release
    assert pa.Schema._import_from_c_capsule(keep) == SCHEMA


def test_borrowing_needs_an_unreleased_schema_capsule(leak_check):
    keep = SCHEMA.__arrow_c_schema__()
    pa.Schema._import_from_c_capsule(keep)  # moves it out: the capsule's struct is released
    with pytest.raises(gda.ArrowInvalid, match="cannot borrow a schema that was released"):
        _lib.schema_borrowed(keep)
    with pytest.raises(gda.ArrowInvalid, match="expected a PyCapsule named 'arrow_schema'"):
        _lib.schema_borrowed(pa.array([1]).__arrow_c_array__()[1])


@pytest.mark.fakecuda
def test_a_device_array_gets_the_device_of_its_data(device_leak_check):
    if gda.cuda_device_count() < 2:
        pytest.fail("the fake driver should offer two devices (FAKECUDA_DEVICES=2, as make test sets)")
    on_one = gda.array(pa.array([1, 2, 3])).to_device("cuda:1")
    _, array = on_one.__arrow_c_device_array__()
    d = fake.device_array_struct(array)
    assert d.device_id == 1
    d.device_id = 0  # what a producer that stamps the current device gives
    with pytest.raises(gda.ArrowInvalid):
        gda.array(_Offer(on_one.__arrow_c_schema__(), array))
    _, array = on_one.__arrow_c_device_array__()
    fake.device_array_struct(array).device_id = 0
    _lib.device_array_stamp_device_of_data(array)
    assert fake.device_array_struct(array).device_id == 1
    back = gda.array(_Offer(on_one.__arrow_c_schema__(), array))
    assert back.device == gda.Device(gda.DeviceType.CUDA, 1)
    assert back.to_pylist() == [1, 2, 3]


def test_a_cpu_device_array_is_left_as_it_is(leak_check):
    _, array = gda.array(pa.array([1])).__arrow_c_device_array__()
    _lib.device_array_stamp_device_of_data(array)
    assert fake.device_array_struct(array).device_id == -1


class _Offer:
    def __init__(self, schema: object, array: object) -> None:
        self.schema, self.array = schema, array

    def __arrow_c_device_array__(self, requested_schema: object = None, **kwargs: object) -> tuple[object, object]:
        return self.schema, self.array

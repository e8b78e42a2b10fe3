"""Values that are right or refused: integers of a format string are read at
the width Arrow gives them, sums of lengths are checked, and every error a
value conversion raises is a godevarrow error that also derives from the
builtin class pyarrow raises for the same value (pyarrow 26 is the oracle
where it returns a value). The cases that hand godevarrow crafted C structs
run each in its own process, with a timeout."""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import pickle
import struct

import godevarrow as gda
import pyarrow as pa
import pytest
from conftest import run_python
from godevarrow import _gofunc, _ipc

INT64_MAX = 2**63 - 1


def from_raw(typ: pa.DataType, raw: bytes, length: int = 1) -> pa.Array:
    """A pyarrow array of typ over the little-endian value bytes raw (no nulls)."""
    return pa.Array.from_buffers(typ, length, [None, pa.py_buffer(raw)])


def i64(v: int) -> bytes:
    return struct.pack("<q", v)


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


# ------------------------------------------------- integers of format strings

# Each snippet offers a C schema (and a one-row array) that pyarrow cannot
# make, through hostile_cases.Producer; it prints the refusal's class and message.
_CRAFTED = """
import ctypes, sys
sys.path[:0] = {tests!r}
import godevarrow as gda
from hostile_cases import Offer, Producer, capsule
p = Producer()
s = p.schema({fmt!r}, name={name!r}, root="schema")
a = p.array({length}, [None, p.buffer({data!r})], root="array")
try:
    got = gda.array(Offer(capsule(s, b"arrow_schema"), capsule(a, b"arrow_array")))
    print("ACCEPTED", got.to_pylist())
    del got
except gda.GodevarrowError as e:
    print("REFUSED", [c.__name__ for c in type(e).__mro__], e)
import gc
gc.collect()
p.release_leftovers()
print("RELEASES", p.counts)
"""


def _offer_in_a_process(fmt: bytes, data: bytes, *, name: bytes = b"x", length: int = 1) -> str:
    import pathlib

    tests_py = pathlib.Path(__file__).parents[1]
    tests = [str(tests_py), str(tests_py / "adversarial")]
    r = run_python(_CRAFTED.format(tests=tests, fmt=fmt, name=name, data=data, length=length), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RELEASES {'schema': 1, 'array': 1}" in r.stdout, r.stdout  # each release called exactly once
    return r.stdout


@pytest.mark.parametrize(
    ("fmt", "data", "message"),
    [
        # 4294967298 = 2^32 + 2: truncated to int32 it would read 123 as 1.23
        (b"d:10,4294967298", (123).to_bytes(16, "little"), "decimal scale 4294967298 is outside the int32 range"),
        (b"d:10,-2147483649", (123).to_bytes(16, "little"), "decimal scale -2147483649 is outside the int32 range"),
        (b"d:4294967306,2", (123).to_bytes(16, "little"), "decimal precision 4294967306 is outside the int32 range"),
        (b"d:10,2,4294967424", (123).to_bytes(16, "little"), "decimal bit width 4294967424 is outside the int32 range"),
        (b"d:39,2", (123).to_bytes(16, "little"), "decimal128 precision 39 is outside 1..38"),
        (b"d:10,2,32", (123).to_bytes(4, "little"), "decimal32 precision 10 is outside 1..9"),
        (b"d:19,2,64", (123).to_bytes(8, "little"), "decimal64 precision 19 is outside 1..18"),
        (b"d:77,2,256", (123).to_bytes(32, "little"), "decimal256 precision 77 is outside 1..76"),
        (b"w:4294967297", b"", "fixed-size binary needs w:N with 0 <= N < 2^31"),
        (b"+w:4294967297", b"", "fixed-size list needs +w:N with 0 <= N < 2^31"),
    ],
    ids=lambda v: v.decode() if isinstance(v, bytes) and v[:2] in (b"d:", b"w:", b"+w") else "",
)
def test_format_integers_wider_than_arrow_gives_them_are_refused(fmt, data, message):
    out = _offer_in_a_process(fmt, data, length=0 if fmt.startswith((b"w:", b"+w:")) else 1)
    assert "REFUSED ['ArrowInvalid', 'GodevarrowError', 'ValueError'" in out, out
    assert message in out, out


def test_decimal_precision_at_each_widths_maximum_is_read():
    for fmt, raw, want in [
        (b"d:9,2,32", (12345).to_bytes(4, "little"), "[Decimal('123.45')]"),
        (b"d:18,2,64", (12345).to_bytes(8, "little"), "[Decimal('123.45')]"),
        (b"d:38,2", (12345).to_bytes(16, "little"), "[Decimal('123.45')]"),
        (b"d:76,2,256", (12345).to_bytes(32, "little"), "[Decimal('123.45')]"),
        (b"d:9,2147483647,32", (7).to_bytes(4, "little"), "[Decimal('7E-2147483647')]"),
    ]:
        out = _offer_in_a_process(fmt, raw)
        assert f"ACCEPTED {want}" in out, (fmt, out)


@pytest.mark.parametrize(
    ("typ", "width"),
    [
        (pa.decimal32(9, -(2**31)), 4),
        (pa.decimal64(18, -(2**31)), 8),
        (pa.decimal128(10, -(2**31)), 16),
        (pa.decimal256(40, -(2**31)), 32),
    ],
)
def test_the_most_negative_decimal_scale_keeps_the_exponents_sign(typ, width):
    # unscaled 3 at scale -2^31 is 3 x 10^(2^31); pyarrow itself cannot read it
    # (decimal.InvalidOperation), so the value is the oracle
    arr = gda.array(from_raw(typ, (3).to_bytes(width, "little")))
    want = decimal.Decimal("3E+2147483648")
    assert arr.to_pylist() == [want] and arr[0] == want
    assert arr[0].as_tuple().exponent == 2**31


# ------------------------------------------------------ sums of lengths


def _run(n: int) -> pa.Array:
    """A valid run-end-encoded array of n rows (one run of 1s)."""
    return pa.RunEndEncodedArray.from_arrays(pa.array([n], pa.int64()), pa.array([1]))


def test_chunk_lengths_that_overflow_int64_are_refused():
    assert len(gda.chunked_array([_run(2**62), _run(2**62 - 1)])) == INT64_MAX  # still fits
    with pytest.raises(gda.ArrowInvalid, match="chunk lengths add up to more than"):
        gda.chunked_array([_run(2**62), _run(2**62)])
    with pytest.raises(gda.ArrowInvalid, match="chunk lengths add up to more than"):
        gda.chunked_array([_run(2**62)] * 4)  # 2^64 rows: would wrap to 0 and equal an empty one


def test_table_row_counts_that_overflow_int64_are_refused():
    batch = pa.record_batch([_run(2**62)], names=["a"])
    with pytest.raises(gda.ArrowInvalid, match="chunk lengths add up to more than"):
        gda.table([batch] * 4)


def test_slices_of_huge_chunked_arrays_stay_in_bounds():
    c = gda.chunked_array([_run(2**62), _run(2**62 - 1)])
    assert len(c.slice(2**62, 2**62)) == 2**62 - 1  # offset + length beyond int64: clamped
    tail = c.slice(INT64_MAX - 2, INT64_MAX)
    assert len(tail) == 2 and tail.to_pylist() == [1, 1]


# ------------------------------------------- errors of the right kind


def _raises_like_pyarrow(pa_arr: pa.Array, gda_class: type, builtin: type, match: str) -> None:
    """pyarrow refuses the value with builtin; godevarrow with gda_class, which
    also derives from builtin, from to_pylist and from x[0] alike."""
    with pytest.raises(builtin):
        pa_arr.to_pylist()
    arr = gda.array(pa_arr)
    for read in (arr.to_pylist, lambda: arr[0]):
        with pytest.raises(gda_class, match=match) as info:
            read()
        assert isinstance(info.value, gda.GodevarrowError) and isinstance(info.value, builtin)


def test_an_unknown_time_zone_is_an_arrow_invalid():
    pa_arr = pa.array([0], pa.timestamp("us", "Nowhere/Land"))
    # pyarrow raises its ArrowInvalid (a ValueError) through zoneinfo, but
    # pytz's UnknownTimeZoneError (a KeyError) where pytz is importable
    # (pandas 2 brings it); godevarrow raises ArrowInvalid either way
    with pytest.raises(KeyError if importlib.util.find_spec("pytz") else pa.ArrowInvalid):
        pa_arr.to_pylist()
    arr = gda.array(pa_arr)
    for read in (arr.to_pylist, lambda: arr[0]):
        with pytest.raises(gda.ArrowInvalid, match="time zone 'Nowhere/Land'") as info:
            read()
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "typ",
    [
        pa.timestamp("s"),
        pa.timestamp("ms"),
        pa.timestamp("us"),
        pa.timestamp("us", "UTC"),
        pa.duration("s"),
        pa.duration("ms"),
    ],
)
@pytest.mark.parametrize("value", [INT64_MAX, -(2**63)])
def test_temporal_values_beyond_pythons_range_overflow_as_in_pyarrow(typ, value):
    _raises_like_pyarrow(from_raw(typ, i64(value)), gda.ArrowInvalid, OverflowError, "out of the range")


@pytest.mark.parametrize(
    ("typ", "value"), [(pa.date32(), 2**31 - 1), (pa.date32(), -(2**31)), (pa.date64(), INT64_MAX)]
)
def test_dates_beyond_pythons_range_overflow_as_in_pyarrow(typ, value):
    raw = i32(value) if typ == pa.date32() else i64(value)
    _raises_like_pyarrow(from_raw(typ, raw), gda.ArrowInvalid, OverflowError, "out of the range")


@pytest.mark.parametrize("typ", [pa.timestamp("ns"), pa.duration("ns")])
def test_nanoseconds_that_are_not_whole_microseconds_are_value_errors_as_in_pyarrow(typ):
    _raises_like_pyarrow(from_raw(typ, i64(INT64_MAX)), gda.ArrowInvalid, ValueError, "not exactly representable")


@pytest.mark.parametrize("value", [INT64_MAX, -(2**63)])
def test_microsecond_durations_at_the_int64_limits_are_read_as_pyarrow_reads_them(value):
    pa_arr = from_raw(pa.duration("us"), i64(value))
    arr = gda.array(pa_arr)
    assert arr.to_pylist() == pa_arr.to_pylist() and arr[0] == pa_arr[0].as_py()


@pytest.mark.parametrize(
    ("typ", "values"),
    [
        (pa.time32("s"), [90000, 86400, -1, 2**31 - 1, -(2**31)]),
        (pa.time32("ms"), [90000 * 1000, -1, 2**31 - 1, -(2**31)]),
        (pa.time64("us"), [90000 * 10**6, -1, 253402300799999999, -62135596800000000]),
        (pa.time64("ns"), [90000 * 10**9, 86400 * 10**9 + 1000]),
    ],
)
def test_times_of_a_day_or_more_wrap_as_in_pyarrow(typ, values):
    raw = b"".join(i32(v) if typ.bit_width == 32 else i64(v) for v in values)
    pa_arr = from_raw(typ, raw, len(values))
    want = pa_arr.to_pylist()
    assert want[0] == dt.time(1, 0)
    arr = gda.array(pa_arr)
    assert arr.to_pylist() == want
    assert [arr[i] for i in range(len(values))] == want


@pytest.mark.parametrize("value", [253402300800000000, -62135596800000001, INT64_MAX])
def test_times_beyond_a_datetimes_range_overflow_as_in_pyarrow(value):
    _raises_like_pyarrow(from_raw(pa.time64("us"), i64(value)), gda.ArrowInvalid, OverflowError, "out of the range")


@pytest.mark.parametrize(
    ("fmt", "name"),
    [(b"c", b"caf\xe9"), (b"tsu:Europe/\xff", b"x"), (b"tsu:\xc3", b"x")],
    ids=["field-name", "time-zone", "cut-time-zone"],
)
def test_names_and_time_zones_that_are_not_utf8_are_refused_at_import(fmt, name):
    data = i64(0) if fmt.startswith(b"ts") else b"\x01"
    out = _offer_in_a_process(fmt, data, name=name)
    assert "REFUSED ['ArrowInvalid', 'GodevarrowError', 'ValueError'" in out, out
    assert "is not valid UTF-8" in out, out


def test_a_prefetch_depth_beyond_int64_is_an_arrow_invalid():
    s = gda.stream(pa.RecordBatchReader.from_batches(pa.schema([("x", pa.int8())]), []))
    for depth in (2**63, -(2**63) - 1, 2**100):
        with pytest.raises(gda.ArrowInvalid, match="depth .* is out of range") as info:
            s.prefetch(depth)
        assert isinstance(info.value, ValueError)
    assert list(s.prefetch(2**63 - 1)) == []  # the stream was not moved by the refusals


def _go_function_of_a_str() -> _gofunc.GoFunction:
    """A GoFunction of one string parameter, described as Go would describe it
    (no Go function of that name is registered: the argument is converted
    before the function is looked up)."""
    return _gofunc.GoFunction(
        {
            "name": "not_registered",
            "go_name": "example.com/nowhere.NotRegistered",
            "devices": [int(gda.DeviceType.CPU)],
            "own_events": False,
            "result": "none",
            "result_go_type": "",
            "context": False,
            "doc": "",
            "params": [{"name": "text", "kind": "str", "go_type": "string"}],
        }
    )


@pytest.mark.parametrize("text", ["\ud800", "ok \udfff", "\ud83d"])
def test_a_lone_surrogate_for_a_go_string_is_an_arrow_invalid(text):
    f = _go_function_of_a_str()
    with pytest.raises(gda.ArrowInvalid, match=r"argument 1 \(text\): .*surrogate") as info:
        f(text)
    assert isinstance(info.value, ValueError)
    with pytest.raises(gda.ArrowInvalid, match=r"argument 1 \(text\)"):
        f(text=text)
    # a valid string passes the conversion and reaches the lookup of the function
    with pytest.raises(gda.GodevarrowError, match="not_registered") as info:
        f("fine")
    assert not isinstance(info.value, UnicodeError)


def _pickle_of(data: bytes) -> bytes:
    """A pickle of an array whose IPC payload is data."""
    return pickle.dumps(_Payload(data))


class _Payload:
    """Pickles as godevarrow's array loader called on data."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __reduce__(self):
        return gda.array(pa.array([1])).__reduce__()[0], (self.data, int(gda.DeviceType.CPU), 0)


@pytest.mark.parametrize(
    "payload",
    [
        _ipc.schema_bytes(pa.schema([("x", pa.int64())])),  # a schema, no batch
        _ipc.schema_bytes(pa.field("x", pa.int64()), single_column=True),
    ],
    ids=["schema-only", "single-column-schema-only"],
)
def test_unpickling_a_payload_without_a_batch_is_an_arrow_invalid(payload):
    with pytest.raises(gda.ArrowInvalid, match="no record batch"):
        pickle.loads(_pickle_of(payload))
    # map() over many pickles must not end early at the bad one
    good = pickle.dumps(gda.array(pa.array([7])))
    with pytest.raises(gda.ArrowInvalid, match="no record batch"):
        list(map(pickle.loads, [good, _pickle_of(payload), good]))

// The value encoding of EncodeValues (values.go): a flat, little-endian
// byte string describing an array's values as a language binding builds them
// (capsule/values.c turns it into Python objects). One tag byte per value,
// then its payload; containers give their element count, then the elements.
#pragma once

enum gda_value_tag {
  GDA_VALUE_NULL = 'N',     // no payload
  GDA_VALUE_FALSE = 'F',    // no payload
  GDA_VALUE_TRUE = 'T',     // no payload
  GDA_VALUE_INT = 'i',      // int64
  GDA_VALUE_UINT = 'u',     // uint64
  GDA_VALUE_FLOAT = 'd',    // float64
  GDA_VALUE_STRING = 's',   // uint64 length, UTF-8 bytes
  GDA_VALUE_BYTES = 'b',    // uint64 length, bytes
  GDA_VALUE_LIST = 'L',     // uint64 count, count values
  GDA_VALUE_TUPLE = 'P',    // uint64 count, count values
  GDA_VALUE_DICT = 'D',     // uint64 count, count (string key, value) pairs
  GDA_VALUE_MAKE = 'C',     // uint8 maker, uint8 argument count, the arguments
  // count numbers, booleans, strings or binaries read from memory, as
  // count elements of the enclosing list or tuple (EncodeValuesC only; the
  // memory is kept alive until the encoding is freed): uint8 kind
  // (gda_value_block_kind), uint64 count, uint64 address of the first value
  // (of the first offset, for strings and binaries), uint64 address of the
  // validity bitmap (0: no nulls), uint64 bit offset into it (and into the
  // values, for booleans), uint64 address of the character data (strings
  // and binaries; else 0)
  GDA_VALUE_BLOCK = 'K',
};

enum gda_value_block_kind {
  GDA_BLOCK_I8, GDA_BLOCK_I16, GDA_BLOCK_I32, GDA_BLOCK_I64,
  GDA_BLOCK_U8, GDA_BLOCK_U16, GDA_BLOCK_U32, GDA_BLOCK_U64,
  GDA_BLOCK_F32, GDA_BLOCK_F64, GDA_BLOCK_BOOL,
  GDA_BLOCK_UTF8, GDA_BLOCK_LARGE_UTF8, GDA_BLOCK_BINARY, GDA_BLOCK_LARGE_BINARY,
};

// The makers a GDA_VALUE_MAKE names: values whose object the binding's
// language builds (python/godevarrow/_values.py MAKERS, in this order).
enum gda_value_maker {
  GDA_MAKE_DECIMAL = 0,         // (string "<unscaled>E<-scale>")
  GDA_MAKE_DATE = 1,            // (days since 1970-01-01)
  GDA_MAKE_TIME = 2,            // (value, unit)         unit: 0 s, 1 ms, 2 us, 3 ns
  GDA_MAKE_TIMESTAMP = 3,       // (value, unit, time zone string or null)
  GDA_MAKE_DURATION = 4,        // (value, unit)
  GDA_MAKE_MONTH_DAY_NANO = 5,  // (months, days, nanoseconds)
  GDA_MAKE_DAY_TIME = 6,        // (days, milliseconds)
  GDA_MAKE_UUID = 7,            // (16 bytes)
  GDA_MAKE_COUNT = 8,
};

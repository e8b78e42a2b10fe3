package cschema

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// Integers of a format string are read at the width Arrow gives them (int32):
// a wider one is refused, never truncated.
func TestFormatIntegersAreReadAtArrowsWidth(t *testing.T) {
	for format, want := range map[string]string{
		"d:10,4294967298":   "decimal scale 4294967298 is outside the int32 range",
		"d:10,-2147483649":  "decimal scale -2147483649 is outside the int32 range",
		"d:4294967306,2":    "decimal precision 4294967306 is outside the int32 range",
		"d:10,2,4294967424": "decimal bit width 4294967424 is outside the int32 range",
		"d:10,2,48":         "decimal bit width 48 is not 32, 64, 128 or 256",
		"d:0,2":             "decimal128 precision 0 is outside 1..38",
		"d:10,2,32":         "decimal32 precision 10 is outside 1..9",
		"d:10,x":            "decimal needs d:precision,scale[,bitwidth]",
		"w:4294967297":      "fixed-size binary needs w:N with 0 <= N < 2^31",
		"+w:2147483648":     "fixed-size list needs +w:N with 0 <= N < 2^31",
	} {
		if _, err := ParseFormat(format); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", format, err, want)
		}
	}
	for format, want := range map[string]DecimalParams{
		"d:9,-2147483648,32":  {9, -1 << 31, 32},
		"d:76,2147483647,256": {76, 1<<31 - 1, 256},
		"d:38,0":              {38, 0, 128},
	} {
		if got, ok := ParseDecimal(format); !ok || got != want {
			t.Errorf("%s: %+v, %v, want %+v", format, got, ok, want)
		}
	}
	if info, err := ParseFormat("+w:2147483647"); err != nil || info.ListSize != 1<<31-1 {
		t.Errorf("+w:2147483647: %+v, %v", info, err)
	}
}

func TestNamesAndFormatsThatAreNotUTF8AreRefused(t *testing.T) {
	if _, err := NewSchema("c", "caf\xe9", FlagNullable, arrow.Metadata{}, nil, nil); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("name: %v", err)
	}
	if _, err := NewSchema("tsu:\xff", "t", FlagNullable, arrow.Metadata{}, nil, nil); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("time zone: %v", err)
	}
	if _, err := NewSchema("tsu:Europe/Zürich", "ü", FlagNullable, arrow.Metadata{}, nil, nil); err != nil {
		t.Errorf("UTF-8 name and time zone: %v", err)
	}
}

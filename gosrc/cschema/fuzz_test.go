package cschema_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// FuzzParseFormat: any string is parsed or rejected, never a panic, and a
// format that parses describes a buffer layout.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "z", "Z", "u", "U", "vz", "vu",
		"d:10,2", "d:38,10,128", "d:76,5,256", "d:9,2,32", "d:18,3,64", "w:16", "tdD", "tdm", "tts", "ttm",
		"ttu", "ttn", "tss:", "tsu:UTC", "tsn:Europe/Paris", "tDs", "tDn", "tiM", "tiD", "tin",
		"+l", "+L", "+vl", "+vL", "+w:3", "+s", "+m", "+ud:0,1", "+us:3,7", "+r", "w:", "d:", "+ud:", "+w:-1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		info, err := cschema.ParseFormat(s)
		if err != nil {
			return
		}
		if info.BufferCount() < 0 || info.BufferCount() > 4 {
			t.Fatalf("%q: %d buffers", s, info.BufferCount())
		}
		if info.ChildCount() != 0 {
			return // a parent needs children: FuzzSchemaImport builds trees
		}
		// a round trip through Arrow Go gives the format back, wherever
		// Arrow Go has the type
		schema, err := cschema.NewSchema(s, "f", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
		if err != nil {
			t.Fatalf("%q parses but makes no schema: %v", s, err)
		}
		field, err := schema.Field()
		if errors.Is(err, errs.ErrNotImplemented) {
			return
		}
		if err != nil {
			t.Fatalf("%q parses but has no Arrow Go field: %v", s, err)
		}
		back, err := cschema.SchemaFromField(field)
		if err != nil {
			t.Fatalf("%q: Arrow Go's %s has no format: %v", s, field.Type, err)
		}
		want := canonicalFormat(s)
		if _, foreign := field.Type.(*cschema.ForeignFixedWidthType); foreign {
			want = s // a type Arrow Go lacks keeps its format verbatim
		}
		if back.Format != want {
			t.Fatalf("%q comes back from Arrow Go's %s as %q", s, field.Type, back.Format)
		}
	})
}

// canonicalFormat is the spelling Arrow's C Data Interface gives a format
// when it writes one: the numbers of a decimal or fixed-size binary in plain
// decimal, and a decimal's bit width left out when it is the default, 128.
func canonicalFormat(s string) string {
	if !strings.HasPrefix(s, "d:") && !strings.HasPrefix(s, "w:") {
		return s
	}
	params := strings.Split(s[2:], ",")
	for i, p := range params {
		n, err := strconv.Atoi(p)
		if err != nil {
			return s
		}
		params[i] = strconv.Itoa(n)
	}
	if s[0] == 'd' && len(params) == 3 && params[2] == "128" {
		params = params[:2]
	}
	return s[:2] + strings.Join(params, ",")
}

// FuzzDecodeMetadata: any blob decodes or is rejected without reading past
// its end, and what decodes encodes back to the same metadata.
func FuzzDecodeMetadata(f *testing.F) {
	f.Add([]byte{})
	f.Add(cschema.EncodeMetadata(arrow.NewMetadata([]string{"k"}, []string{"v"})))
	f.Add(cschema.EncodeMetadata(arrow.NewMetadata([]string{"ARROW:extension:name", "x"}, []string{"uuid", ""})))
	f.Add([]byte{1, 0, 0, 0, 255, 255, 255, 127})
	f.Add([]byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		md, err := cschema.DecodeMetadata(b)
		if err != nil {
			return
		}
		back, err := cschema.DecodeMetadata(cschema.EncodeMetadata(md))
		if err != nil || !back.Equal(md) {
			t.Fatalf("metadata %v does not survive encode/decode: %v, %v", md, back, err)
		}
	})
}

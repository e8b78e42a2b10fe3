package values_test

import (
	"errors"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/internal/arraytest"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

func TestEncodeValuesRefusesOutOfRange(t *testing.T) {
	a := arraytest.Int64Batch(t, 1, 2)
	defer a.Release()
	if _, err := values.EncodeValues(a, 1, 2); !errors.Is(err, errs.ErrInvalid) {
		t.Fatalf("values [1, 3) of 2: %v", err)
	}
	b, err := values.EncodeValues(a, 0, 2)
	if err != nil || b[0] != values.GDAValueList {
		t.Fatalf("%v %v", b, err)
	}
}

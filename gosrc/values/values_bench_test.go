package values_test

import (
	"fmt"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/internal/arraytest"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

func BenchmarkEncodeValues(b *testing.B) {
	for _, n := range []int{1, 1000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := arraytest.Int64Batch(b, make([]int64, n)...)
			col, _ := a.Column(0)
			for i := 0; i < b.N; i++ {
				e, err := values.EncodeValuesC(col, 0, int64(n), false)
				if err != nil {
					b.Fatal(err)
				}
				e.Free()
			}
		})
	}
}

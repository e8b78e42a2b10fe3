package cdevice

import (
	"math/rand"
	"testing"
)

// countValid counts word by word in the middle of a range; every start and
// length, byte-aligned or not, must give the bit-by-bit count.
func TestCountValidMatchesABitByBitCount(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	bits := make([]byte, 64)
	rng.Read(bits)
	for start := 0; start < 80; start++ {
		for n := 0; start+n <= 8*len(bits); n += 1 + n/7 {
			want := 0
			for i := start; i < start+n; i++ {
				want += int(bits[i/8]>>(i%8)) & 1
			}
			if got := countValid(bits, start, n); got != want {
				t.Fatalf("countValid(start %d, n %d) = %d, want %d", start, n, got, want)
			}
		}
	}
}

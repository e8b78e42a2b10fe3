package dlpack

import (
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// The deleter's Go side, called with a handle no export issued (0, a slot
// beyond any table) or one whose tensor was already deleted, must neither
// panic into its C caller nor release anything.
func TestDeleterIgnoresStaleHandles(t *testing.T) {
	before := errs.Panics()
	live := LiveExports()
	for _, h := range []uint64{0, 1<<40 | 123456} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("deleter(%#x) panicked into its C caller: %v", h, v)
				}
			}()
			gdaDLPackRelease(_Ctype_uintptr_t(h))
		}()
	}
	if n := LiveExports(); n != live {
		t.Errorf("LiveExports went from %d to %d", live, n)
	}
	if n := errs.Panics() - before; n != 0 {
		t.Errorf("%d panics recovered", n)
	}
}

// A panic inside the deleter is recovered and counted like the cdevice
// callbacks' (the library then refuses further work), not swallowed.
func TestDeleterPanicIsCounted(t *testing.T) {
	before := errs.Panics()
	h := exports.Put("not an array") // the deleter's type assertion fails
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("deleter panicked into its C caller: %v", v)
			}
		}()
		gdaDLPackRelease(_Ctype_uintptr_t(h))
	}()
	if n := errs.Panics() - before; n != 1 {
		t.Errorf("Panics grew by %d, want 1", n)
	}
}

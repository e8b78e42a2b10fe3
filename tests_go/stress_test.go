package tests_go

import (
	"math/rand"
	"sync"
	"testing"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

// held is one thing a worker owns: a Go array, or an exported C array (with
// its schema) that nobody imported yet.
type held struct {
	a      *cdevice.Array
	schema *cschema.CArrowSchema
	c      *cdevice.CArrowArray
}

// TestStressRandomInterleavings runs 10^5 random steps on 4 goroutines —
// import from C, export, import back, move a child out and release the
// parent, slice, retain/release, hand objects to another goroutine to
// release there — and ends with every counter back at its baseline and every
// C-produced array released exactly once.
func TestStressRandomInterleavings(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	const workers, steps = 4, 100_000
	handoff := make(chan held, 64)
	var produced sync.WaitGroup
	var mu sync.Mutex
	producedRoots := int64(0)
	run := func(seed int64, n int) {
		defer produced.Done()
		rng := rand.New(rand.NewSource(seed))
		var pool []held
		drop := func(h held) {
			switch {
			case h.a != nil:
				h.a.Release()
			case h.c != nil:
				cb.ReleaseArray(h.c)
				cb.ReleaseSchema(h.schema)
				cb.Free(h.c)
				cb.Free(h.schema)
			}
		}
		take := func() (held, bool) {
			if len(pool) == 0 {
				return held{}, false
			}
			i := rng.Intn(len(pool))
			h := pool[i]
			pool[i] = pool[len(pool)-1]
			pool = pool[:len(pool)-1]
			return h, true
		}
		for i := 0; i < n; i++ {
			switch op := rng.Intn(9); {
			case op == 0 || len(pool) == 0: // import a C-built array
				s, c := cb.NewSchema(), cb.NewArray()
				cb.Produce(cb.Producer(rng.Intn(5)), s, c)
				mu.Lock()
				producedRoots++
				mu.Unlock()
				schema, err := cschema.ImportSchema(s)
				if err != nil {
					t.Error(err)
					return
				}
				a, err := cdevice.ImportArray(c, schema)
				cb.Free(s)
				cb.Free(c)
				if err != nil {
					t.Error(err)
					return
				}
				pool = append(pool, held{a: a})
			case op == 1: // export a Go array to C
				if h, ok := take(); ok && h.a != nil {
					s, c := cb.NewSchema(), cb.NewArray()
					if err := cdevice.ExportArray(h.a, c); err != nil {
						t.Error(err)
						return
					}
					if err := cschema.ExportSchema(h.a.Schema(), s); err != nil {
						t.Error(err)
						return
					}
					if rng.Intn(2) == 0 {
						h.a.Release() // the export keeps the data alive alone
					} else {
						pool = append(pool, h)
					}
					pool = append(pool, held{schema: s, c: c})
				} else if ok {
					pool = append(pool, h)
				}
			case op == 2: // import an exported C array back
				if h, ok := take(); ok && h.c != nil {
					schema, err := cschema.ImportSchema(h.schema)
					if err != nil {
						t.Error(err)
						return
					}
					a, err := cdevice.ImportArray(h.c, schema)
					cb.Free(h.schema)
					cb.Free(h.c)
					if err != nil {
						t.Error(err)
						return
					}
					pool = append(pool, held{a: a})
				} else if ok {
					pool = append(pool, h)
				}
			case op == 3: // move child 0 out of an exported struct, release the parent
				if h, ok := take(); ok && h.c != nil && int64(*(*int64)(unsafe.Add(unsafe.Pointer(h.c), 32))) > 0 {
					child := cb.NewArray()
					cb.MoveChild0AndRelease(h.c, child)
					cb.ReleaseArray(child)
					cb.Free(child)
					cb.ReleaseSchema(h.schema)
					cb.Free(h.schema)
					cb.Free(h.c)
				} else if ok {
					pool = append(pool, h)
				}
			case op == 4: // slice
				if h, ok := take(); ok && h.a != nil && h.a.Len() > 0 {
					off := rng.Intn(h.a.Len())
					s, err := h.a.Slice(int64(off), int64(rng.Intn(h.a.Len()-off+1)))
					if err != nil {
						t.Error(err)
						return
					}
					pool = append(pool, h, held{a: s})
				} else if ok {
					pool = append(pool, h)
				}
			case op == 5: // share a reference
				if h, ok := take(); ok && h.a != nil {
					h.a.Retain()
					pool = append(pool, h, h)
				} else if ok {
					pool = append(pool, h)
				}
			case op == 6: // hand over to another goroutine
				if h, ok := take(); ok {
					select {
					case handoff <- h:
					default:
						pool = append(pool, h)
					}
				}
			case op == 7: // adopt what another goroutine handed over
				select {
				case h := <-handoff:
					pool = append(pool, h)
				default:
				}
			default: // release
				if h, ok := take(); ok {
					drop(h)
				}
			}
		}
		for _, h := range pool {
			drop(h)
		}
	}
	produced.Add(workers)
	for w := 0; w < workers; w++ {
		go run(int64(w+1), steps/workers)
	}
	produced.Wait()
	close(handoff)
	for h := range handoff {
		if h.a != nil {
			h.a.Release()
		} else {
			cb.ReleaseArray(h.c)
			cb.ReleaseSchema(h.schema)
			cb.Free(h.c)
			cb.Free(h.schema)
		}
	}
	// each C-built array comes with its schema: two roots, two releases
	if got := cb.Releases(); got != 2*producedRoots {
		t.Errorf("%d C arrays (and schemas) produced, %d roots released", producedRoots, got)
	}
}

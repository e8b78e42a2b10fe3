package handle_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/handle"
)

func TestPutGetDelete(t *testing.T) {
	var tab handle.Table
	a, b := tab.Put("a"), tab.Put("b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d, %d", a, b)
	}
	if v, ok := tab.Get(a); !ok || v != "a" {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	if v, ok := tab.Delete(a); !ok || v != "a" {
		t.Fatalf("Delete(a) = %v, %v", v, ok)
	}
	if _, ok := tab.Get(a); ok {
		t.Fatal("a deleted handle is still live")
	}
	if _, ok := tab.Delete(a); ok {
		t.Fatal("a handle was deleted twice")
	}
	c := tab.Put("c") // reuses a's slot with a new generation
	if c == a {
		t.Fatal("a reused slot gave the stale handle back")
	}
	if _, ok := tab.Get(a); ok {
		t.Fatal("a stale handle finds the slot's new value")
	}
	if v, _ := tab.Get(c); v != "c" {
		t.Fatalf("Get(c) = %v", v)
	}
	for _, h := range []handle.Handle{0, 1 << 40, handle.Handle(1<<32 | 99)} {
		if _, ok := tab.Get(h); ok {
			t.Fatalf("Get(%#x) found a value", h)
		}
	}
	if n := tab.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
}

func TestConcurrent(t *testing.T) {
	var tab handle.Table
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10000; i++ {
				h := tab.Put(i)
				if v, ok := tab.Get(h); !ok || v != i {
					t.Errorf("Get = %v, %v; want %d", v, ok, i)
					return
				}
				if _, ok := tab.Delete(h); !ok {
					t.Error("Delete failed")
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := tab.Len(); n != 0 {
		t.Fatalf("Len = %d after all deletes", n)
	}
}

func BenchmarkPutDelete(b *testing.B) {
	var tab handle.Table
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tab.Delete(tab.Put(&tab))
	}
}

func Example() {
	var tab handle.Table
	h := tab.Put("some Go value") // an integer C code can keep
	v, _ := tab.Get(h)
	fmt.Println(v)
	tab.Delete(h)
	_, ok := tab.Get(h)
	fmt.Println(ok)
	// Output:
	// some Go value
	// false
}

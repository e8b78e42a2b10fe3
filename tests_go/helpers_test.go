package tests_go

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	// the CUDA tests run against the CUDA backend, which registers itself
	// when imported (as the binding imports it)
	_ "github.com/godevarrow/godevarrow/gosrc/device/cuda"
)

func unsafePointer(p *byte) unsafe.Pointer { return unsafe.Pointer(p) }

func corpusDir(t *testing.T) string {
	dir := os.Getenv("GODEVARROW_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata", "arrow-ipc-integration")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Arrow IPC gold corpus is not at %s (it lives in shared/ beside the checkout)", dir)
	}
	return dir
}

// forEachCorpusView runs check, in one subtest per file of the Arrow IPC gold
// corpus, on every record and on the slices of it that slices returns (nil:
// none); i is 0 for the record itself. start runs once per file before the
// first record (a baseline check). Files Arrow Go v17 cannot read are
// skipped: their types are covered by C-built arrays.
func forEachCorpusView(t *testing.T, start func(*testing.T), slices func(arrow.Record) []arrow.Record,
	check func(t *testing.T, i int, view arrow.Record)) {
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.stream"))
	if len(files) == 0 {
		t.Fatalf("no corpus files in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".stream"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rdr, err := ipc.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Skipf("Arrow Go v17 cannot read this file (%v); the type is covered by C-built arrays", err)
			}
			defer rdr.Release()
			start(t)
			for rdr.Next() {
				rec := rdr.Record()
				check(t, 0, rec)
				for i, view := range slices(rec) {
					check(t, i+1, view)
					view.Release()
				}
			}
			if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
				t.Skipf("Arrow Go v17 cannot read this file: %v", err)
			}
		})
	}
}

// eachArray reads arrays with next until io.EOF, fails the test on any
// other error, and calls f with each array and its index; it releases the
// array after f. It returns how many arrays it read.
func eachArray(t *testing.T, next func() (*cdevice.Array, error), f func(i int, a *cdevice.Array)) int {
	t.Helper()
	for i := 0; ; i++ {
		a, err := next()
		if errors.Is(err, io.EOF) {
			return i
		}
		if err != nil {
			t.Fatal(err)
		}
		f(i, a)
		a.Release()
	}
}

// cudaListReader is a reader of n copies of host on cuda:1.
func cudaListReader(t *testing.T, host *cdevice.Array, n int) *cdevice.ListReader {
	t.Helper()
	chunks := make([]*cdevice.Array, n)
	for i := range chunks {
		chunks[i] = mustCopy(t, host, cuda1)
	}
	r, err := cdevice.NewListReader(host.Schema(), device.CUDA, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		c.Release() // the reader keeps its own references
	}
	return r
}

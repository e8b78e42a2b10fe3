package streams

import (
	"errors"
	"testing"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// An array that on_next_task has imported but not yet queued when the
// reader closes must still be released: Close drains the queue only once,
// so a late delivery may not land in it. The hook holds the producer's
// thread inside that window until Close has returned.
func TestAsyncCloseWhileATaskIsBeingDeliveredReleasesIt(t *testing.T) {
	waitReleased(t)
	waitNoLiveArrays(t)
	before := allStats()
	entered := make(chan struct{})
	proceed := make(chan struct{})
	first := true
	hook := func() {
		if first { // only the producer's goroutine calls it, one task at a time
			first = false
			close(entered)
			<-proceed
		}
	}
	asyncImportedHook.Store(&hook)
	defer asyncImportedHook.Store(nil)

	reader, handler, err := NewAsyncReader(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ExportAsyncDeviceStream(int64ListReader(t, 3), handler, AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second): // a hang guard, not a timing
		t.Fatal("the producer never delivered a task")
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	waitReleased(t) // the producer released the handler: on_next_task has returned

	// the producer closes its reader after release; give it that long
	deadline := time.Now().Add(30 * time.Second)
	for allStats() != before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := allStats(); after != before {
		t.Fatalf("an array delivered during Close was kept: before %+v, after %+v", before, after)
	}
	if a, err := reader.Next(); !errors.Is(err, errs.ErrConsumed) {
		t.Fatalf("Next after Close: %v, %v; want errs.ErrConsumed", a, err)
	}
}

// liveCounts is every leak counter an async close touches: the arrays and
// imports (cdevice) and the streams and async objects (this package).
type liveCounts struct {
	arrays  cdevice.Stats
	streams Stats
}

func allStats() liveCounts { return liveCounts{cdevice.LiveStats(), LiveStats()} }

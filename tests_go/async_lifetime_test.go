package tests_go

import (
	"os"
	"os/exec"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	"github.com/godevarrow/godevarrow/tests_go/casync"
)

// A consumer may call request or cancel on a released producer's struct
// however many streams later (Arrow Go v18's does a moment later): the
// call must find a valid struct and do nothing. The check runs in a child
// process whose glibc scribbles over freed memory (MALLOC_PERTURB_), so that
// a use after free crashes the child instead of passing by luck.
func TestAsyncLateProducerCallsAfterManyStreams(t *testing.T) {
	if os.Getenv("GODEVARROW_LATE_CALLS_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAsyncLateProducerCallsAfterManyStreams$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GODEVARROW_LATE_CALLS_CHILD=1", "MALLOC_PERTURB_=165")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	early := casync.NewConsumer(casync.Config{InitialRequest: 10, FailAtTask: -1, CancelAtTask: -1})
	defer early.Free()
	if err := streams.ExportAsyncDeviceStream(int64Reader(t, 2, -1), early.Handler(), streams.AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRelease(t, early)
	for range 1500 { // more streams than any tombstone count
		reader, h, err := streams.NewAsyncReader(1)
		if err != nil {
			t.Fatal(err)
		}
		if err := streams.ExportAsyncDeviceStream(int64Reader(t, 1, -1), h, streams.AsyncExportOptions{}); err != nil {
			t.Fatal(err)
		}
		eachArray(t, reader.Next, func(int, *cdevice.Array) {})
		reader.Close()
	}
	early.LateCalls()
	if o := early.Observed(); o.CallsAfterRelease != 0 || o.Release != 1 {
		t.Errorf("release %d times, %d calls after it", o.Release, o.CallsAfterRelease)
	}
	if n := errs.Panics(); n != 0 {
		t.Errorf("%d panics", n)
	}
}

package tests_go

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
	fc "github.com/godevarrow/godevarrow/tests_go/fakecudactl"
)

var (
	cuda0 = device.Device{Type: device.CUDA, ID: 0}
	cuda1 = device.Device{Type: device.CUDA, ID: 1}
)

// deviceBaseline checks at the end that godevarrow and the fake driver hold
// what they held at the start.
func deviceBaseline(t *testing.T) {
	t.Helper()
	fc.Require(t)
	baseline(t)
	// pooled driver resources (pinned staging memory) are not leaks: idle
	// ones go back to the driver before each count
	device.ReleasePools()
	before := fc.LiveNow()
	t.Cleanup(func() {
		device.ReleasePools()
		if after := fc.LiveNow(); after != before {
			t.Errorf("the driver holds more: before %+v, after %+v", before, after)
		}
	})
}

func mustCopy(t *testing.T, a *cdevice.Array, dst device.Device) *cdevice.Array {
	t.Helper()
	c, err := cdevice.CopyToDevice(a, dst)
	if err != nil {
		t.Fatalf("copy to %s: %v", dst, err)
	}
	if got := c.Device(); got.Type != dst.Type || (dst.Type == device.CUDA && got.ID != dst.ID) {
		t.Fatalf("copy landed on %s, want %s", got, dst)
	}
	// a copy to the host is complete when CopyToDevice returns; a copy to a
	// device is ordered by the event it carries
	if dst.Type == device.CPU && c.SyncEvent() != nil {
		t.Fatalf("a copy to the host carries a sync event: it is complete when CopyToDevice returns")
	}
	if dst.Type != device.CPU && c.SyncEvent() == nil {
		t.Fatalf("a copy to %s carries no sync event: nothing orders a reader after its copies", dst)
	}
	return c
}

// sameOnHost copies a (on any device) to the host and says whether its data
// equals want's (a host array).
func sameOnHost(t *testing.T, want, a *cdevice.Array) bool {
	t.Helper()
	onHost := mustCopy(t, a, device.Host)
	defer onHost.Release()
	w, _ := want.ToArrow()
	defer w.Release()
	got, _ := onHost.ToArrow()
	defer got.Release()
	return array.Equal(w, got)
}

// TestCUDACorpusAcrossDevices sends every corpus file (and slices of it)
// CPU -> cuda:0 -> cuda:1 -> CPU; device memory is unreadable on the host, so
// any host read on the way would crash the test.
func TestCUDACorpusAcrossDevices(t *testing.T) {
	fc.Require(t)
	middle := func(rec arrow.Record) []arrow.Record {
		if rec.NumRows() <= 2 {
			return nil
		}
		return []arrow.Record{rec.NewSlice(1, rec.NumRows()-1)}
	}
	forEachCorpusView(t, deviceBaseline, middle, func(t *testing.T, i int, view arrow.Record) {
		a, err := cdevice.FromRecord(view)
		if err != nil {
			t.Fatal(err)
		}
		d0 := mustCopy(t, a, cuda0)
		d1 := mustCopy(t, d0, cuda1)
		host := mustCopy(t, d1, device.Host)
		defer func() {
			for _, x := range []*cdevice.Array{host, d1, d0, a} {
				x.Release()
			}
		}()
		got, err := host.ToRecord()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		if !array.RecordEqual(got, view) {
			t.Errorf("view %d differs after cpu -> cuda:0 -> cuda:1 -> cpu", i)
		}
	})
}

// deviceArrayView mirrors struct ArrowDeviceArray (arrow-c-abi.h).
type deviceArrayView struct {
	array      [10]uintptr
	deviceID   int64
	deviceType int32
	_          int32
	syncEvent  unsafe.Pointer
	reserved   [3]int64
}

func int64Array(t *testing.T, n int) *cdevice.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(int64(i) * 7)
	}
	arr := b.NewArray()
	defer arr.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64}, arr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func stringArray(t *testing.T, n int) *cdevice.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < n; i++ {
		if i%5 == 0 {
			b.AppendNull()
		} else {
			b.Append(strings.Repeat("x", i%7))
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, arr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCUDAExportCarriesDeviceAndZeroedReserved(t *testing.T) {
	deviceBaseline(t)
	host := stringArray(t, 100)
	defer host.Release()
	for _, dev := range []device.Device{cuda0, cuda1} {
		a := mustCopy(t, host, dev)
		s, d := cb.NewSchema(), cb.NewDeviceArray()
		if err := cdevice.ExportDeviceArray(a, d); err != nil {
			t.Fatal(err)
		}
		if err := cschema.ExportSchema(a.Schema(), s); err != nil {
			t.Fatal(err)
		}
		v := (*deviceArrayView)(unsafe.Pointer(d))
		if v.deviceType != int32(device.CUDA) || v.deviceID != dev.ID {
			t.Errorf("exported device %d:%d, want cuda:%d", v.deviceType, v.deviceID, dev.ID)
		}
		// the copy is ordered by its event, which the export hands on
		if v.syncEvent == nil {
			t.Error("a copy to a device is exported without its sync_event")
		}
		if v.reserved != [3]int64{} {
			t.Errorf("reserved not zeroed: %v", v.reserved)
		}
		a.Release() // the export keeps the data alive on its own
		schema, err := cschema.ImportSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := cdevice.ImportDeviceArray(d, schema)
		if err != nil {
			t.Fatal(err)
		}
		if v.array[8] != 0 { // release member
			t.Error("the import must move the struct (release set to NULL)")
		}
		if !sameOnHost(t, host, back) {
			t.Errorf("data differs after export/import on %s", dev)
		}
		back.Release()
		cb.Free(s)
		cb.Free(d)
	}
}

func exportToC(t *testing.T, a *cdevice.Array) (*cschema.CArrowSchema, *cdevice.CArrowDeviceArray) {
	t.Helper()
	s, d := cb.NewSchema(), cb.NewDeviceArray()
	if err := cdevice.ExportDeviceArray(a, d); err != nil {
		t.Fatal(err)
	}
	if err := cschema.ExportSchema(a.Schema(), s); err != nil {
		t.Fatal(err)
	}
	return s, d
}

func TestCUDAStringImportReadsNothingUntilAnOperationNeedsTheOffsets(t *testing.T) {
	deviceBaseline(t)
	// a batch with three string-like columns and a fixed-width one
	host := stringArray(t, 1000)
	defer host.Release()
	mk := func(cols ...*cdevice.Array) *cdevice.Array {
		fields := make([]arrow.Field, len(cols))
		data := make([]arrow.ArrayData, len(cols))
		for i, c := range cols {
			f, _ := c.Schema().Field()
			f.Name = string(rune('a' + i))
			fields[i], data[i] = f, c.Data()
		}
		st := arrow.StructOf(fields...)
		sd := array.NewData(st, cols[0].Len(), []*memory.Buffer{nil}, data, 0, 0)
		defer sd.Release()
		s, err := cschema.SchemaFromField(arrow.Field{Name: "", Type: st})
		if err != nil {
			t.Fatal(err)
		}
		a, err := cdevice.NewArray(s, sd, device.Host)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	batch := mk(host, host, host)
	defer batch.Release()
	d := mustCopy(t, batch, cuda0)
	defer d.Release()
	s, c := exportToC(t, d)
	defer cb.Free(s)
	defer cb.Free(c)
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	calls, bytes, syncs := fc.CopyCalls(fc.DeviceToHost), fc.BytesCopied(fc.DeviceToHost), fc.Syncs()
	back, err := cdevice.ImportDeviceArray(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Release()
	// the import checks the structs on the host: no byte leaves the device
	if n, b, y := fc.CopyCalls(fc.DeviceToHost)-calls, fc.BytesCopied(fc.DeviceToHost)-bytes, fc.Syncs()-syncs; n != 0 || b != 0 || y != 0 {
		t.Errorf("the import made %d device-to-host copies (%d bytes) and %d synchronizations, want none", n, b, y)
	}
	// the first operation that needs the offsets (validation) fetches the two
	// that bound each string column (first and last) in one batched gather:
	// one stream, one synchronization, and never again; the copy carved the
	// batch's buffers from one allocation, so the six offsets are one copy
	// of their span (buffers between them included)
	part, err := back.Slice(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Release()
	calls, bytes, syncs = fc.CopyCalls(fc.DeviceToHost), fc.BytesCopied(fc.DeviceToHost), fc.Syncs()
	for range 2 {
		if err := cdevice.Validate(part, false); err != nil {
			t.Fatal(err)
		}
		if err := cdevice.Validate(back, false); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := fc.CopyCalls(fc.DeviceToHost)-calls, fc.BytesCopied(fc.DeviceToHost)-bytes; n != 1 || b < 3*2*4 || b > 64<<10 {
		t.Errorf("%d device-to-host copies of %d bytes for 3 string columns, want 1 of their span", n, b)
	}
	if n := fc.Syncs() - syncs; n != 1 {
		t.Errorf("%d synchronizations for the offsets, want 1", n)
	}
	// the data buffers got their sizes: the copy to the host is the batch
	h := mustCopy(t, back, device.Host)
	defer h.Release()
	if eq, err := cdevice.Equal(h, batch, false); err != nil || !eq {
		t.Errorf("the string batch came back different (%v)", err)
	}
}

// exportedInt64OnCUDA copies a small int64 array (with a validity bitmap,
// int64Host) to cuda:1 and exports it to C: the imported schema and the
// device array, freed when the test ends.
func exportedInt64OnCUDA(t *testing.T) (*cschema.Schema, *cdevice.CArrowDeviceArray) {
	t.Helper()
	host := int64Host(t, 3)
	defer host.Release()
	d := mustCopy(t, host, cuda1)
	defer d.Release()
	s, c := exportToC(t, d)
	t.Cleanup(func() { cb.Free(s); cb.Free(c) })
	schema, _ := cschema.ImportSchema(s)
	return schema, c
}

func TestCUDAFixedWidthImportReadsNothing(t *testing.T) {
	deviceBaseline(t)
	schema, c := exportedInt64OnCUDA(t)
	calls := fc.CopyCalls(fc.DeviceToHost)
	back, err := cdevice.ImportDeviceArray(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	back.Release()
	if n := fc.CopyCalls(fc.DeviceToHost) - calls; n != 0 {
		t.Errorf("%d device-to-host copies importing an int64 array", n)
	}
}

func TestCUDAImportOfGodevarrowsOwnMemoryAsksTheDriverNothing(t *testing.T) {
	deviceBaseline(t)
	schema, c := exportedInt64OnCUDA(t)
	queries := func() int64 { return fc.Calls("cuPointerGetAttribute") + fc.Calls("cuPointerGetAttributes") }
	before := queries()
	back, err := cdevice.ImportDeviceArray(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	back.Release()
	// the buffers lie in allocations of godevarrow's that are still live:
	// their device is known without a pointer query
	if n := queries() - before; n != 0 {
		t.Errorf("%d pointer queries importing godevarrow's own device memory, want 0", n)
	}
}

func TestCUDADeviceStreamKeepsDevices(t *testing.T) {
	deviceBaseline(t)
	host := stringArray(t, 10)
	defer host.Release()
	r := cudaListReader(t, host, 3)
	cs := cb.NewDeviceStream()
	defer cb.Free(cs)
	if err := streams.ExportDeviceArrayStream(r, cs); err != nil {
		t.Fatal(err)
	}
	in, err := streams.ImportDeviceArrayStream(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.DeviceType() != device.CUDA {
		t.Fatalf("stream device type %s", in.DeviceType())
	}
	n := eachArray(t, in.Next, func(i int, a *cdevice.Array) {
		// copies to a device carry the event they are ordered by, handed on
		if a.Device() != cuda1 || a.SyncEvent() == nil {
			t.Errorf("chunk %d on %s (event %v)", i, a.Device(), a.SyncEvent())
		}
	})
	if n != 3 {
		t.Fatalf("%d chunks", n)
	}
}

// TestCUDAFaultInjection fails, one at a time, every driver call a copy to a
// device, a copy back and an import make, and checks that each failure is a
// clean error naming the call and that nothing leaks.
func TestCUDAFaultInjection(t *testing.T) {
	fc.Require(t)
	host := stringArray(t, 50)
	defer host.Release()
	// warm up: contexts are retained once per process
	w := mustCopy(t, host, cuda0)
	w.Release()
	calls := []string{
		"cuMemAlloc_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuStreamCreate",
		"cuStreamSynchronize", "cuEventCreate", "cuEventRecord", "cuStreamWaitEvent",
	}
	ops := map[string]func() error{
		"to cuda:0": func() error {
			d, err := cdevice.CopyToDevice(host, cuda0)
			if err == nil {
				d.Release()
			}
			return err
		},
		"round trip": func() error {
			d, err := cdevice.CopyToDevice(host, cuda0)
			if err != nil {
				return err
			}
			defer d.Release()
			s, c := cb.NewSchema(), cb.NewDeviceArray()
			defer cb.Free(s)
			defer cb.Free(c)
			if err := cdevice.ExportDeviceArray(d, c); err != nil {
				return err
			}
			if err := cschema.ExportSchema(d.Schema(), s); err != nil {
				cdevice.ReleaseExportedArray(unsafe.Pointer(c), true)
				return err
			}
			schema, err := cschema.ImportSchema(s)
			if err != nil {
				return err
			}
			back, err := cdevice.ImportDeviceArray(c, schema)
			if err != nil {
				return err
			}
			defer back.Release()
			h, err := cdevice.CopyToDevice(back, device.Host)
			if err == nil {
				h.Release()
			}
			return err
		},
	}
	failures := 0
	for name, op := range ops {
		for _, call := range calls {
			t.Run(name+"/"+call, func(t *testing.T) {
				deviceBaseline(t)
				// with empty pools every stream, event and allocation is made
				cuda.DrainPools()
				before := fc.Calls(call)
				if err := op(); err != nil {
					t.Fatalf("the operation fails without a fault: %v", err)
				}
				if fc.Calls(call) == before {
					t.Logf("%s does not call %s: nothing to inject", name, call)
					return
				}
				cuda.DrainPools()
				device.ReleasePools() // and every allocation is the driver's
				// an allocation refused for lack of memory is tried again once
				// the device memory pool's idle blocks are freed (devpool.c)
				code, name := 2, "OUT_OF_MEMORY"
				if call == "cuMemAlloc_v2" {
					code, name = 1, "INVALID_VALUE"
				}
				fc.FailNth(call, 1, code)
				defer fc.ClearFaults()
				err := op()
				if err == nil {
					t.Fatalf("a failing %s went unnoticed", call)
				}
				failures++
				var de *device.DriverError
				if !errors.As(err, &de) || de.Call == "" || !strings.Contains(err.Error(), name) {
					t.Errorf("the error does not name the driver call and error: %v", err)
				}
			})
		}
	}
	if failures < 6 {
		t.Errorf("only %d faults were injected", failures)
	}
}

func TestCUDACopiesTakeStreamsAndEventsFromPools(t *testing.T) {
	deviceBaseline(t)
	host := stringArray(t, 50)
	defer host.Release()
	roundTrip := func() {
		d := mustCopy(t, host, cuda0)
		defer d.Release()
		h := mustCopy(t, d, device.Host)
		h.Release()
	}
	roundTrip() // fills the pools
	made := func() int64 {
		return fc.Calls("cuStreamCreate") + fc.Calls("cuStreamDestroy_v2") + fc.Calls("cuEventCreate") + fc.Calls("cuEventDestroy_v2")
	}
	records := fc.Calls("cuEventRecord")
	before := made()
	for range 5 {
		roundTrip()
	}
	// every copy runs on a stream; one to the device records one event after
	// its copies (the one its result is ordered by), one to the host none...
	if n := fc.Calls("cuEventRecord") - records; n != 5 {
		t.Errorf("%d events recorded for 5 copies to the device and 5 back, want 5", n)
	}
	// ...and the streams come from the pool, not made and destroyed per operation
	if n := made() - before; n != 0 {
		t.Errorf("%d streams or events created or destroyed by 5 round trips, want 0", n)
	}
}

// An array imported from DLPack on the caller's default stream (the legacy
// stream of the device's primary context, current on the caller's thread)
// puts its event off (cdevice's lazy_event.go): exported again to a consumer
// that names that stream, nothing is recorded and nothing waits; a consumer
// on another stream gets the event, recorded then on the import's stream,
// and the strict fake shows the data is there for it.
// onPrimaryContext locks the test to its thread with device 0's primary
// context current (the caller's default stream of the put-off tests), and
// gives 100 int64 values on the host, their copy on cuda:0 and the CUDA
// backend; all undone when the test ends.
func onPrimaryContext(t *testing.T) (host, onDevice *cdevice.Array, backend device.Backend) {
	t.Helper()
	deviceBaseline(t)
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	t.Cleanup(fc.MakePrimaryCurrent(t, 0)) // restored before the thread is unlocked
	host = int64Array(t, 100)
	t.Cleanup(host.Release)
	onDevice = mustCopy(t, host, cuda0)
	t.Cleanup(onDevice.Release)
	backend, err := device.BackendFor(device.CUDA)
	if err != nil {
		t.Fatal(err)
	}
	return host, onDevice, backend
}

func TestADLPackImportOnTheCallersDefaultStreamPutsItsEventOff(t *testing.T) {
	host, a, backend := onPrimaryContext(t)
	stream := func(handle uintptr) device.Stream {
		if s, ok := backend.CallerDefaultStream(0); ok && handle == 1 {
			return s
		}
		s, err := backend.ForeignStream(0, handle)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	exportWaits := func(a *cdevice.Array, s device.Stream) int64 {
		before := fc.Calls("cuStreamWaitEvent")
		p, err := dlpack.Export(a, dlpack.ExportOptions{Versioned: true, Stream: s})
		if err != nil {
			t.Fatal(err)
		}
		dlpack.Delete(p, true)
		return fc.Calls("cuStreamWaitEvent") - before
	}
	// the copy's event was recorded on a pooled stream: the legacy stream waits
	if n := exportWaits(a, stream(1)); n != 1 {
		t.Errorf("an export of a copy made %d waits on the consumer's stream, want 1", n)
	}
	p, err := dlpack.Export(a, dlpack.ExportOptions{Versioned: true, Stream: stream(1)})
	if err != nil {
		t.Fatal(err)
	}
	records := fc.Calls("cuEventRecord")
	imported, err := dlpack.Import(p, true, stream(1))
	if err != nil {
		t.Fatal(err)
	}
	defer imported.Release()
	if n := exportWaits(imported, stream(1)); n != 0 {
		t.Errorf("an export on the stream the import was ordered on made %d waits, want 0", n)
	}
	if n := fc.Calls("cuEventRecord") - records; n != 0 {
		t.Errorf("the import and an export on its own stream recorded %d events, want 0", n)
	}
	if n := exportWaits(imported, stream(2)); n != 1 {
		t.Errorf("an export on the per-thread stream made %d waits, want 1", n)
	}
	if n := fc.Calls("cuEventRecord") - records; n != 1 {
		t.Errorf("an export on another stream recorded %d events, want 1 (the import's, put off)", n)
	}
	if imported.SyncEvent() == nil {
		t.Fatal("a DLPack import on a stream carries no event")
	}
	if !sameOnHost(t, host, imported) {
		t.Error("the imported array differs")
	}
}

// When a put-off event cannot be recorded, SyncEvent says "read at once"
// only after it waited on the host for the stream the event was put off on.
func TestAPutOffEventThatCannotBeRecordedIsWaitedForOnTheHost(t *testing.T) {
	_, a, backend := onPrimaryContext(t)
	legacy, ok := backend.CallerDefaultStream(0)
	if !ok {
		t.Fatal("device 0's primary context is current, but it has no caller's default stream")
	}
	p, err := dlpack.Export(a, dlpack.ExportOptions{Versioned: true, Stream: legacy})
	if err != nil {
		t.Fatal(err)
	}
	imported, err := dlpack.Import(p, true, legacy)
	if err != nil {
		t.Fatal(err)
	}
	defer imported.Release()
	syncs := fc.Calls("cuStreamSynchronize")
	fc.FailNth("cuEventRecord", 1, 2) // CUDA_ERROR_OUT_OF_MEMORY: not sticky
	defer fc.ClearFaults()
	if ev := imported.SyncEvent(); ev != nil {
		t.Fatalf("SyncEvent gave %v after its event failed to record", ev)
	}
	if n := fc.Calls("cuStreamSynchronize") - syncs; n != 1 {
		t.Errorf("%d host synchronizations of the stream instead of the event, want 1", n)
	}
}

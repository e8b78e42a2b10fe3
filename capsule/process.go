package main

// The process exports (process.c calls them): the CUDA backend's status,
// the build's versions, live-object counters, and the deliberate panic of
// the tests.

/*
#include <stdlib.h>
#include "module.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

//export gdaCUDAStatus
func gdaCUDAStatus(st *C.gda_cuda_status, e *C.gda_error) C.int {
	return call(e, func() error {
		// the status of one backend: CUDA's, which this binding links
		b := cuda.Backend()
		st.library = C.CString(b.Library())
		if err := b.Open(); err != nil {
			st.message = C.CString(err.Error())
			return nil
		}
		n := b.DeviceCount()
		msg := fmt.Sprintf("%d device(s)", n)
		if v, err := b.DriverVersion(); err == nil {
			msg += fmt.Sprintf(", driver API %d.%d", v/1000, v%1000/10)
		}
		if name, err := b.DeviceName(0); err == nil && n > 0 {
			msg += ", device 0: " + name
		}
		st.available, st.device_count, st.message = 1, C.int64_t(n), C.CString(msg)
		return nil
	})
}

// gdaBuildInfo reports versions as "key=value" lines (the caller frees
// them); modules lists every module linked in, as path@version.
//
//export gdaBuildInfo
func gdaBuildInfo(out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		lines := []string{"go=" + runtime.Version(), "goarch=" + runtime.GOOS + "/" + runtime.GOARCH}
		if bi, ok := debug.ReadBuildInfo(); ok {
			var modules []string // what a rebuild (godevarrow build-ext) must match
			for _, dep := range bi.Deps {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				modules = append(modules, dep.Path+"@"+dep.Version)
				if strings.HasPrefix(dep.Path, "github.com/apache/arrow/go/") {
					lines = append(lines, "arrow_go="+dep.Path+"@"+dep.Version)
				}
			}
			lines = append(lines, "modules="+strings.Join(modules, ","))
		}
		*out = C.CString(strings.Join(lines, "\n"))
		return nil
	})
}

//export gdaDebugCounters
func gdaDebugCounters(out *C.gda_counters, e *C.gda_error) C.int {
	return call(e, func() error {
		st, ss := cdevice.LiveStats(), streams.LiveStats()
		cache := cschema.SchemaCacheSize()
		pooled := cuda.Pooled()
		*out = C.gda_counters{
			handles:          C.int64_t(handles.Len()),
			exported_schemas: C.int64_t(st.ExportedSchemas),
			exported_arrays:  C.int64_t(st.ExportedArrays),
			exported_streams: C.int64_t(ss.ExportedStreams),
			imported_arrays:  C.int64_t(st.ImportedArrays),
			imported_streams: C.int64_t(ss.ImportedStreams),
			bytes_held:       C.int64_t(st.AllocatedBytes),
			arrays:           C.int64_t(st.Arrays),
			exported_tensors: C.int64_t(dlpack.LiveExports()),
			held_imports:     C.int64_t(st.HeldImports),

			schema_cache_entries: C.int64_t(cache.Entries),
			schema_cache_bytes:   C.int64_t(cache.Bytes),

			pooled_streams:       C.int64_t(pooled.Streams),
			pooled_events:        C.int64_t(pooled.Events),
			pooled_host_buffers:  C.int64_t(pooled.HostBuffers),
			pooled_device_blocks: C.int64_t(pooled.DeviceBlocks),
			pooled_device_bytes:  C.int64_t(pooled.DeviceBytes),

			dlpack_template_exports: C.int64_t(dlpack.TemplateExports()),
		}
		return nil
	})
}

// gdaDebugReleasePools gives the idle resources of the device backends'
// pools back to their drivers (leak checks compare the drivers' counters).
//
//export gdaDebugReleasePools
func gdaDebugReleasePools(e *C.gda_error) C.int {
	return call(e, func() error {
		device.ReleasePools()
		return nil
	})
}

// gdaDebugPanic panics inside an export, to prove that panics become Python
// exceptions and that the library then refuses work. It only runs when the
// environment variable GODEVARROW_ALLOW_PANIC_TEST=1 (read with C getenv).
//
//export gdaDebugPanic
func gdaDebugPanic(e *C.gda_error) C.int {
	return call(e, func() error {
		name := C.CString("GODEVARROW_ALLOW_PANIC_TEST")
		defer C.free(unsafe.Pointer(name))
		if v := C.getenv(name); v == nil || C.GoString(v) != "1" {
			return &errs.Error{Kind: errs.ErrInvalid, Msg: "debug_panic() needs GODEVARROW_ALLOW_PANIC_TEST=1"}
		}
		panic("deliberate panic from debug_panic()")
	})
}

package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// gdaBuildInfo reports versions as "key=value" lines (the caller frees it).
//
//export gdaBuildInfo
func gdaBuildInfo() *C.char {
	lines := []string{"go=" + runtime.Version(), "goarch=" + runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if strings.HasPrefix(dep.Path, "github.com/apache/arrow/go/") {
				lines = append(lines, "arrow_go="+dep.Path+"@"+dep.Version)
			}
		}
	}
	return C.CString(strings.Join(lines, "\n"))
}

package dlpack

import (
	"fmt"
	"sync/atomic"
)

type counter struct{ n atomic.Int64 }

func (c *counter) add(d int64) { c.n.Add(d) }

var liveExports counter

// LiveExports returns the number of exported tensors whose deleter has not
// run (those kept alive by a keeper included: see ExportOptions).
func LiveExports() int64 { return liveExports.n.Load() + keptExports() }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

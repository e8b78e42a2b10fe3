package cuda

/*
#include "cuda.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// Pools of streams and events, one per device. A stream or event costs a
// driver call to create and another to destroy (several microseconds for a
// stream on a GPU); an exchange or a copy needs one each, so they are taken
// from and given back to these pools instead. Each pool is a buffered
// channel: taking and giving back never block, and a full pool destroys what
// is given back. What the pools hold is bounded (poolCap per device and
// kind) and is no leak: Pooled reports it, for leak checks.

const poolCap = 32

type devicePool struct {
	streams chan *Stream
	events  chan *Event
}

var (
	poolsOnce                   sync.Once
	pools                       []devicePool
	pooledStreams, pooledEvents atomic.Int64
)

// poolOf is device dev's pool, nil for a device that does not exist (its
// methods then take nothing and keep nothing).
func poolOf(dev int) *devicePool {
	poolsOnce.Do(func() {
		pools = make([]devicePool, DeviceCount())
		for i := range pools {
			pools[i] = devicePool{make(chan *Stream, poolCap), make(chan *Event, poolCap)}
		}
	})
	if dev < 0 || dev >= len(pools) {
		return nil
	}
	return &pools[dev]
}

func (p *devicePool) takeStream() *Stream {
	if p != nil {
		select {
		case s := <-p.streams:
			pooledStreams.Add(-1)
			return s
		default:
		}
	}
	return nil
}

func (p *devicePool) putStream(s *Stream) bool {
	if p != nil {
		select {
		case p.streams <- s:
			pooledStreams.Add(1)
			return true
		default:
		}
	}
	return false
}

func (p *devicePool) takeEvent() *Event {
	if p != nil {
		select {
		case e := <-p.events:
			pooledEvents.Add(-1)
			return e
		default:
		}
	}
	return nil
}

func (p *devicePool) putEvent(e *Event) bool {
	if p != nil {
		select {
		case p.events <- e:
			pooledEvents.Add(1)
			return true
		default:
		}
	}
	return false
}

// PooledCounts is what the pools hold now. A driver's count of live objects
// less these is what godevarrow's operations still hold.
type PooledCounts struct {
	Streams, Events int64
	HostBuffers     int64 // pinned staging memory of gathers (cuda.c)
	DeviceBlocks    int64 // idle device memory (devpool.c)
	DeviceBytes     int64
}

// Pooled is what the pools hold now.
func Pooled() PooledCounts {
	var blocks, bytes C.longlong
	C.gda_cuda_devpool_idle(&blocks, &bytes)
	return PooledCounts{
		Streams:      pooledStreams.Load(),
		Events:       pooledEvents.Load(),
		HostBuffers:  int64(C.gda_cuda_pooled_host()),
		DeviceBlocks: int64(blocks),
		DeviceBytes:  int64(bytes),
	}
}

// releaseDeviceMemory frees the device memory pool's idle blocks
// (device.ReleasePools).
func releaseDeviceMemory() { C.gda_cuda_devpool_release() }

func init() { device.RegisterPool(releaseDeviceMemory) }

// DrainPools destroys what the pools hold (streams, events; the pinned
// staging blocks are kept, as they are bounded by the concurrent gathers):
// the next operations create their own again. For a program that gives the
// device back (before resetting its context), and for tests of the paths that
// create streams and events.
func DrainPools() {
	for dev := range pools {
		p := &pools[dev]
		for s := p.takeStream(); s != nil; s = p.takeStream() {
			_ = s.Destroy()
		}
		for e := p.takeEvent(); e != nil; e = p.takeEvent() {
			_ = e.Destroy()
		}
	}
}

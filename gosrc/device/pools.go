package device

import "sync"

// Pools of driver resources that backends keep between operations (pinned
// staging memory, for one) so that an operation does not pay an allocation
// that costs more than its work. Each pool is bounded by its backend and
// holds only idle resources; ReleasePools gives every idle one back to its
// driver, for leak checks that compare the driver's live counters with a
// baseline, and for programs that want the memory back.

var (
	poolsMu sync.Mutex
	pools   []func()
)

// RegisterPool adds release, which frees a pool's idle resources, to the
// pools ReleasePools empties. Backends call it from init().
func RegisterPool(release func()) {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	pools = append(pools, release)
}

// ReleasePools frees the idle resources of every registered pool. Resources
// in use stay with their operation and return to their pool when it ends; a
// later ReleasePools frees them.
func ReleasePools() {
	poolsMu.Lock()
	fs := append([]func(){}, pools...)
	poolsMu.Unlock()
	for _, f := range fs {
		f()
	}
}

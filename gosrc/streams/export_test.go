package streams

// SetProbeVerdict makes every probe's read count as blocked, or not, whatever
// the measure says (see probeVerdict); restore puts the measure back.
func SetProbeVerdict(blocked bool) (restore func()) {
	probeVerdict.Store(&blocked)
	return func() { probeVerdict.Store(nil) }
}

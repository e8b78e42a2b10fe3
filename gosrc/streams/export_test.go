package streams

// SetProbeVerdict makes every probe's read count as blocked, or not, whatever
// the measure says (see probeVerdict); restore puts the measure back.
func SetProbeVerdict(blocked bool) (restore func()) {
	probeVerdict.Store(&blocked)
	return func() { probeVerdict.Store(nil) }
}

// ProducerReaders is the number of read-aheads counted in producerProcs.
func ProducerReaders() int {
	producerProcs.mu.Lock()
	defer producerProcs.mu.Unlock()
	return producerProcs.readers
}

// Package streams holds the stream runtimes of godevarrow: the C Stream and
// C Device Stream interfaces (StreamReader imports a foreign stream,
// ExportArrayStream and ExportDeviceArrayStream serve any
// cdevice.ArrayReader), the one-shot stream a language binding holds for a
// stream its user may read from several threads (OneShotStream), read-ahead
// on a goroutine (PrefetchReader), and the async device stream interface.
//
// # Async device streams
//
// In the async interface the consumer allocates an
// ArrowAsyncDeviceStreamHandler and the producer calls it: on_schema first
// (with handler->producer populated), on_next_task once per array the
// consumer asked for with ArrowAsyncProducer.request, on_next_task(NULL) at
// the end or on_error on failure, and release last. ExportAsyncDeviceStream
// serves any ArrayReader to any C handler: one goroutine makes every handler
// call, so they are strictly serialized, while request and cancel only record
// what the consumer asked and wake it, so they may be called from any thread,
// also from inside on_schema and on_next_task. NewAsyncReader is the other
// side: a C handler for any producer plus an AsyncReader (an ArrayReader)
// that requests as many arrays as its queue holds and one more for each it
// hands out. See ExampleExportAsyncDeviceStream.
package streams

module example.com/godevarrow-tests

go 1.26.8

require (
	github.com/apache/arrow/go/v17 v17.0.0
	github.com/godevarrow/godevarrow v0.0.0
)

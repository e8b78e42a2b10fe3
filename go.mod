module github.com/godevarrow/godevarrow

go 1.26.8

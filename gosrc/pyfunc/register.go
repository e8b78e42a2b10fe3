// Package pyfunc makes Go functions callable from Python through godevarrow,
// in godevarrow's own Go runtime.
//
// A package registers its functions in init:
//
//	func init() {
//		pyfunc.Register("positive_sum", PositiveSum)
//	}
//
// and `python -m godevarrow build-ext ./yourpkg` builds godevarrow's
// extension module again with the package linked in, so that the process
// has one Go runtime (Go supports no more). In Python the function is
// gda.go.positive_sum, with the Go doc comment as its docstring
// (docs/go-guide.md).
//
// # Signatures
//
// A registered function takes, in order, an optional context.Context and
// any number of parameters of these types:
//
//   - *cdevice.Array: an array or a record batch (a struct array)
//   - *cdevice.ChunkedArray (the same type as *cdevice.Table): a chunked
//     array or a table
//   - cdevice.ArrayReader: a stream
//   - bool, string, int, int8 … int64, uint, uint8 … uint64, float32,
//     float64 (and named types of these)
//
// It returns one value of those types, or none, optionally followed by an
// error.
//
// # Ownership
//
// Arguments are lent for the call: Retain an Array or ChunkedArray to keep
// it after returning. An ArrayReader argument is the function's to read; it
// is closed after the call, or, when the function returns an ArrayReader,
// when that one is closed, so that a lazy transform may read its input
// later. A returned Array or ChunkedArray is a reference the function hands
// over: to return an argument, Retain it first. A returned ArrayReader is
// read lazily by the caller, who closes it.
//
// # Devices and events
//
// A function accepts CPU data unless it declares the device types it
// accepts with Devices; other data is refused before it runs. Device arrays
// (and the arrays a stream argument yields) arrive with their producers'
// sync events already waited on, unless the function declares OwnEvents:
// then it orders its own work after Array.SyncEvent. A result made from the
// arguments (a slice, a column) carries their events, and an array made on
// a device by cdevice (CopyToDevice) carries its own.
//
// # Errors, panics and cancellation
//
// A returned error reaches Python as godevarrow.GoError with the error's
// message. A panic in the function, or in a reader it returned, is
// recovered and reaches Python as godevarrow.GoError too, with the panic
// value and the stack; the library goes on working. The function runs on
// the calling thread without the GIL. Its context is cancelled when the
// Python caller is interrupted (Ctrl-C on Python's main thread; the call
// then returns when the function does), and after the call returns (for a
// returned reader: when that is closed).
package pyfunc

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// Kind is what a parameter or a result is, as Python sees it.
type Kind string

// The kinds of parameters and results.
const (
	KindNone    Kind = "none" // a function without a result
	KindArray   Kind = "array"
	KindChunked Kind = "chunked_array"
	KindStream  Kind = "stream"
	KindBool    Kind = "bool"
	KindInt     Kind = "int"
	KindFloat   Kind = "float"
	KindString  Kind = "str"
)

// Param describes one parameter of a registered function.
type Param struct {
	Name   string // from the Go source when build-ext documented it, else arg1, arg2, …
	Kind   Kind
	GoType string
	typ    reflect.Type
}

// Function is a registered function.
type Function struct {
	Name         string // the Python name
	GoName       string // the Go function: import path "." name
	Doc          string // the Go doc comment (see Document)
	Params       []Param
	Result       Kind
	ResultGoType string
	Devices      []device.Type // the device types the function accepts
	OwnEvents    bool          // device arrays arrive with their events unwaited

	fn          reflect.Value
	withContext bool
	withError   bool
}

// Option declares something about a function to Register.
type Option func(*Function)

// Devices declares the device types whose data the function accepts (the
// default is device.CPU alone).
func Devices(types ...device.Type) Option {
	return func(f *Function) {
		if len(types) == 0 {
			panic(fmt.Sprintf("pyfunc.Register(%q): Devices needs at least one device type", f.Name))
		}
		for _, t := range types {
			if !t.Known() {
				panic(fmt.Sprintf("pyfunc.Register(%q): unknown device type %d", f.Name, int(t)))
			}
		}
		f.Devices = slices.Clone(types)
	}
}

// OwnEvents declares that the function orders its work after the sync
// events of the device arrays it is given (Array.SyncEvent) itself, instead
// of having them waited on before it runs.
func OwnEvents() Option {
	return func(f *Function) { f.OwnEvents = true }
}

var (
	arrayType   = reflect.TypeFor[*cdevice.Array]()
	chunkedType = reflect.TypeFor[*cdevice.ChunkedArray]()
	readerType  = reflect.TypeFor[cdevice.ArrayReader]()
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

func kindOf(t reflect.Type) (Kind, bool) {
	switch t {
	case arrayType:
		return KindArray, true
	case chunkedType:
		return KindChunked, true
	case readerType:
		return KindStream, true
	}
	switch t.Kind() {
	case reflect.Bool:
		return KindBool, true
	case reflect.String:
		return KindString, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return KindInt, true
	case reflect.Float32, reflect.Float64:
		return KindFloat, true
	}
	return "", false
}

const supported = "*cdevice.Array, *cdevice.ChunkedArray, cdevice.ArrayReader, bool, string, an integer or a float type"

// pythonKeywords cannot be attribute names in Python source.
var pythonKeywords = strings.Fields(`False None True and as assert async await break class continue def del
	elif else except finally for from global if import in is lambda nonlocal not or pass raise return try
	while with yield`)

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("the name is empty")
	}
	for i, r := range name {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && !(i > 0 && '0' <= r && r <= '9') {
			return fmt.Errorf("the name is not a Python identifier (ASCII letters, digits and _, not starting with a digit)")
		}
	}
	if slices.Contains(pythonKeywords, name) {
		return fmt.Errorf("the name is a Python keyword")
	}
	if name[0] == '_' {
		return fmt.Errorf("the name starts with _, which Python keeps for private and special names")
	}
	return nil
}

var registry struct {
	sync.RWMutex
	byName map[string]*Function
	docs   map[string]docEntry
}

type docEntry struct {
	doc    string
	params []string
}

// Register makes fn callable from Python as name. It panics (at init, so
// that a build finds it) when the name is not a Python identifier or is
// taken, or when fn's signature is not one the package supports (see the
// package documentation).
func Register(name string, fn any, opts ...Option) {
	f, err := newFunction(name, fn, opts)
	if err != nil {
		panic(fmt.Sprintf("pyfunc.Register(%q): %v", name, err))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Function{}
	}
	if old, ok := registry.byName[name]; ok {
		panic(fmt.Sprintf("pyfunc.Register(%q): the name is taken by %s", name, old.GoName))
	}
	if d, ok := registry.docs[f.GoName]; ok {
		f.document(d)
	}
	registry.byName[name] = f
}

func newFunction(name string, fn any, opts []Option) (*Function, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("%T is not a function", fn)
	}
	t := v.Type()
	if t.IsVariadic() {
		return nil, fmt.Errorf("variadic functions are not supported")
	}
	f := &Function{Name: name, fn: v, Devices: []device.Type{device.CPU}, Result: KindNone}
	if rf := runtime.FuncForPC(v.Pointer()); rf != nil {
		f.GoName = rf.Name()
	}
	for i := 0; i < t.NumIn(); i++ {
		pt := t.In(i)
		if i == 0 && pt == contextType {
			f.withContext = true
			continue
		}
		k, ok := kindOf(pt)
		if !ok {
			return nil, fmt.Errorf("parameter %d has type %s; parameters may be %s (and a first context.Context)", i+1, pt, supported)
		}
		f.Params = append(f.Params, Param{Name: fmt.Sprintf("arg%d", len(f.Params)+1), Kind: k, GoType: pt.String(), typ: pt})
	}
	outs := t.NumOut()
	if outs > 0 && t.Out(outs-1) == errorType {
		f.withError = true
		outs--
	}
	switch outs {
	case 0:
	case 1:
		k, ok := kindOf(t.Out(0))
		if !ok {
			return nil, fmt.Errorf("the result has type %s; a result may be %s", t.Out(0), supported)
		}
		f.Result, f.ResultGoType = k, t.Out(0).String()
	default:
		return nil, fmt.Errorf("%s returns %d values; return one value, optionally followed by an error", t, t.NumOut())
	}
	for _, opt := range opts {
		opt(f)
	}
	return f, nil
}

// Document gives the function goName (import path "." name) its doc
// comment and parameter names, as `godevarrow build-ext` reads them from the
// source; the code it generates calls this. Functions registered from
// goName before or after get them.
func Document(goName, doc string, paramNames ...string) {
	registry.Lock()
	defer registry.Unlock()
	if registry.docs == nil {
		registry.docs = map[string]docEntry{}
	}
	d := docEntry{doc: doc, params: paramNames}
	registry.docs[goName] = d
	for _, f := range registry.byName {
		if f.GoName == goName {
			f.document(d)
		}
	}
}

// document applies a doc entry; the caller holds the registry's lock.
func (f *Function) document(d docEntry) {
	f.Doc = d.doc
	names := d.params
	if f.withContext && len(names) == len(f.Params)+1 {
		names = names[1:]
	}
	if len(names) == len(f.Params) {
		for i := range f.Params {
			if names[i] != "" && names[i] != "_" && checkName(names[i]) == nil {
				f.Params[i].Name = names[i]
			}
		}
	}
}

// Lookup returns the function registered as name, or nil.
func Lookup(name string) *Function {
	registry.RLock()
	defer registry.RUnlock()
	return registry.byName[name]
}

// Functions returns the registered functions, by name.
func Functions() []*Function {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]*Function, 0, len(registry.byName))
	for _, f := range registry.byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Signature is the function as Python would spell it, for messages.
func (f *Function) Signature() string {
	names := make([]string, len(f.Params))
	for i, p := range f.Params {
		names[i] = p.Name
	}
	return f.Name + "(" + strings.Join(names, ", ") + ")"
}

// TakesContext reports whether the function's first parameter is a
// context.Context (only such a call can be cancelled).
func (f *Function) TakesContext() bool { return f.withContext }

func (f *Function) accepts(t device.Type) bool { return slices.Contains(f.Devices, t) }

package cdevice

import (
	"context"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/compute"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Cast returns a with the requested schema, following the PyCapsule
// "requested_schema" rules: the same schema is returned as is (zero-copy);
// schemas that differ only in names of nested children, nullability flags or
// metadata are relabelled (zero-copy); otherwise the values are cast with
// Arrow Go's safe cast (host memory only). A struct (record batch) must keep
// its number of fields and their names. A request for another encoding of
// the same values that cannot be produced (strings as views or a dictionary,
// say) is answered with a's own schema, as the PyCapsule spec allows.
// Incompatible requests fail with errs.ErrInvalid; casts of device memory fail
// with errs.ErrNotImplemented.
func Cast(a *Array, target *cschema.Schema) (*Array, error) {
	if a.schema.Equal(target) {
		a.Retain()
		return a, nil
	}
	target, err := producibleTarget(a.schema, target, a.dev.Type)
	if err != nil {
		return nil, err
	}
	if a.schema.Equal(target) {
		a.Retain()
		return a, nil
	}
	if err := checkCastable(a.schema, target, a.dev.Type); err != nil {
		return nil, err
	}
	if needsCompute(a.schema, target) {
		// Arrow Go's kernels trust their input (some run on goroutines of
		// their own, where no recover can reach a panic)
		if err := a.validateForCompute(); err != nil {
			return nil, err
		}
	}
	data, err := castData(a.schema, target, a.data, a.dev)
	if err != nil {
		return nil, err
	}
	if err := checkData(target, data, 0); err != nil {
		data.Release()
		return nil, err
	}
	if !target.Nullable() && data.NullN() != 0 {
		ev, err := a.syncEvent()
		nulls := 0
		if err == nil {
			nulls, err = countNulls(a.dev, target, data, ev)
		}
		if err != nil || nulls != 0 {
			data.Release()
			if err != nil {
				return nil, err
			}
			return nil, errs.Errorf(errs.ErrInvalid, "requested schema declares %s non-nullable but the data has %d nulls", target.Describe(), nulls)
		}
	}
	out := a.derive(target, data)
	out.goMemory = true // compute may allocate outside Allocator
	return out, nil
}

// checkCastable rejects requests that are not another representation of the
// same data, before any work is done.
func checkCastable(from, to *cschema.Schema, dev device.Type) error {
	if from.Info().Layout == cschema.LayoutStruct && from.Dictionary == nil {
		if to.Info().Layout != cschema.LayoutStruct || to.Dictionary != nil {
			return errs.Errorf(errs.ErrInvalid, "requested schema %s is not compatible with the data's struct type %s", to, from)
		}
		if len(from.Children) != len(to.Children) {
			return errs.Errorf(errs.ErrInvalid, "requested schema has %d fields but the data has %d", len(to.Children), len(from.Children))
		}
		for i := range from.Children {
			// an unnamed field ("", as pylibcudf exports every column:
			// pylibcudf/interop.pyx, ColumnMetadata defaults) has no name to
			// contradict: naming it is a relabel
			if from.Children[i].Name != "" && from.Children[i].Name != to.Children[i].Name {
				return errs.Errorf(errs.ErrInvalid, "requested schema names field %d %q but the data names it %q", i, to.Children[i].Name, from.Children[i].Name)
			}
			if err := checkCastable(from.Children[i], to.Children[i], dev); err != nil {
				return err
			}
		}
		return nil
	}
	if sameLayout(from, to) {
		return nil
	}
	if !dev.HostAccessible() {
		return errs.Errorf(errs.ErrNotImplemented, "casting %s to %s is only implemented for host memory, the data is on %s", from, to, dev)
	}
	fromType, err := from.DataType()
	if err != nil {
		return err
	}
	toType, err := to.DataType()
	if err != nil {
		return err
	}
	if !compute.CanCast(fromType, toType) {
		return errs.Errorf(errs.ErrInvalid, "requested type %s is not compatible with the data's type %s (no cast exists)", to, from)
	}
	return nil
}

// producibleTarget returns the schema Cast will produce for a request: to,
// except that any part of it that asks for another encoding of the same
// values (strings as views or a dictionary, say) which no cast can produce
// is replaced by the data's own part. The PyCapsule spec lets a producer
// answer with its own representation; the consumer can still read it.
func producibleTarget(from, to *cschema.Schema, dev device.Type) (*cschema.Schema, error) {
	if sameLayout(from, to) {
		return to, nil
	}
	if from.Info().Layout == cschema.LayoutStruct && from.Dictionary == nil &&
		to.Info().Layout == cschema.LayoutStruct && to.Dictionary == nil && len(from.Children) == len(to.Children) {
		var children []*cschema.Schema
		for i := range to.Children {
			c, err := producibleTarget(from.Children[i], to.Children[i], dev)
			if err != nil {
				return nil, err
			}
			if c != to.Children[i] && children == nil {
				children = append([]*cschema.Schema(nil), to.Children...)
			}
			if children != nil {
				children[i] = c
			}
		}
		if children == nil {
			return to, nil
		}
		return cschema.NewSchema(to.Format, to.Name, to.Flags, to.Metadata, children, nil)
	}
	if sameLogicalValues(from, to) && checkCastable(from, to, dev) != nil {
		flags := from.Flags&^cschema.FlagNullable | to.Flags&cschema.FlagNullable
		return cschema.NewSchema(from.Format, to.Name, flags, to.Metadata, from.Children, from.Dictionary)
	}
	return to, nil
}

// sameLogicalValues reports whether two schemas describe the same logical
// values in possibly different encodings: string, large string and string
// view are one family (binary likewise); dictionary and run-end encodings
// stand for their values; list variants compare their children.
func sameLogicalValues(a, b *cschema.Schema) bool {
	a, b = decoded(a), decoded(b)
	fa, fb := logicalFamily(a), logicalFamily(b)
	if fa != fb {
		return false
	}
	if fa != "" {
		return true
	}
	if a.Format != b.Format && !(isListLike(a) && isListLike(b)) {
		return false
	}
	if len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if !sameLogicalValues(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return true
}

// decoded strips dictionary and run-end encodings.
func decoded(s *cschema.Schema) *cschema.Schema {
	for {
		switch {
		case s.Dictionary != nil:
			s = s.Dictionary
		case s.Info().Layout == cschema.LayoutRunEndEncoded && len(s.Children) == 2:
			s = s.Children[1]
		default:
			return s
		}
	}
}

func logicalFamily(s *cschema.Schema) string {
	switch s.Info().Layout {
	case cschema.LayoutBinary, cschema.LayoutLargeBinary, cschema.LayoutBinaryView:
		if s.Info().Utf8 {
			return "string"
		}
		return "binary"
	}
	return ""
}

func isListLike(s *cschema.Schema) bool {
	switch s.Info().Layout {
	case cschema.LayoutList, cschema.LayoutLargeList, cschema.LayoutListView, cschema.LayoutLargeListView:
		return true
	}
	return false
}

// sameLayout reports whether two schemas describe the same physical data, so
// that the requested one can simply relabel it.
func sameLayout(a, b *cschema.Schema) bool {
	if a.Format != b.Format || len(a.Children) != len(b.Children) || (a.Dictionary == nil) != (b.Dictionary == nil) {
		return false
	}
	for i := range a.Children {
		if !sameLayout(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return a.Dictionary == nil || sameLayout(a.Dictionary, b.Dictionary)
}

// needsCompute reports whether casting from to to runs an Arrow Go kernel
// (castData), rather than relabelling the same buffers.
func needsCompute(from, to *cschema.Schema) bool {
	if sameLayout(from, to) {
		return false
	}
	if from.Info().Layout == cschema.LayoutStruct && from.Dictionary == nil {
		for i := range from.Children {
			if needsCompute(from.Children[i], to.Children[i]) {
				return true
			}
		}
		return false
	}
	return true
}

func castData(from, to *cschema.Schema, d arrow.ArrayData, dev device.Device) (arrow.ArrayData, error) {
	toType, err := to.DataType()
	if err != nil {
		return nil, err
	}
	if sameLayout(from, to) {
		// relabel: same buffers under the requested type
		out := array.NewData(toType, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
		if d.Dictionary() != nil {
			out.SetDictionary(d.Dictionary())
		}
		return out, nil
	}
	if from.Info().Layout == cschema.LayoutStruct && from.Dictionary == nil {
		// Children are cast whole: they are indexed through the parent's
		// offset, which must stay as it is because the validity bitmap does.
		children := make([]arrow.ArrayData, len(from.Children))
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, c := range d.Children() {
			cast, err := castData(from.Children[i], to.Children[i], c, dev)
			if err != nil {
				return nil, err
			}
			children[i] = cast
		}
		return array.NewData(toType, d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), nil
	}
	in, err := hostArray(dev, from, d, true)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	alloc := &castAllocator{live: map[uintptr][]byte{}}
	defer alloc.freeAll()
	if in.Data().Offset() != 0 && len(from.Children) == 0 && from.Dictionary == nil {
		// Arrow Go v17's cast kernels misread leaf inputs with an offset (a
		// bool array's bits, a float array's NaN check): they get a copy at
		// offset 0, prepared for the kernels as the input was
		if flat, err := array.Concatenate([]arrow.Array{in}, alloc); err == nil {
			prepared, err := hostArray(device.Host, from, flat.Data(), true)
			flat.Release()
			if err == nil {
				defer prepared.Release()
				in = prepared
			}
		}
	}
	ctx := compute.WithAllocator(context.Background(), alloc)
	out, err := compute.CastArray(ctx, in, compute.SafeCastOptions(toType))
	if err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "cannot cast %s to the requested %s: %v", from, to, err)
	}
	defer out.Release()
	// the result is copied out of the kernels' buffers, whose reference
	// counts are not to be trusted (see castAllocator)
	c := copier{src: device.Host, dst: device.Host}
	data, err := c.copyData(out.Data(), 0)
	if err != nil {
		c.releaseAll()
		return nil, err
	}
	return data, nil
}

// castAllocator allocates one cast's buffers from Allocator and remembers
// those not freed yet: Arrow Go v17's cast kernels leak some (casts of
// numbers to strings, fixed-size binary to binary, list<int32> to
// list<int64>; buffers never freed, or retained once too often). castData
// copies the result out, and freeAll then frees whatever is left.
type castAllocator struct {
	mu   sync.Mutex
	live map[uintptr][]byte // by the address of the allocation
}

func (c *castAllocator) track(b []byte) []byte {
	if cap(b) > 0 {
		c.mu.Lock()
		c.live[uintptr(unsafe.Pointer(unsafe.SliceData(b)))] = b
		c.mu.Unlock()
	}
	return b
}

func (c *castAllocator) forget(b []byte) {
	c.mu.Lock()
	delete(c.live, uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	c.mu.Unlock()
}

func (c *castAllocator) Allocate(n int) []byte { return c.track(Allocator.Allocate(n)) }

func (c *castAllocator) Reallocate(n int, b []byte) []byte {
	c.forget(b)
	return c.track(Allocator.Reallocate(n, b))
}

func (c *castAllocator) Free(b []byte) {
	c.forget(b)
	Allocator.Free(b)
}

// freeAll frees every allocation not freed yet.
func (c *castAllocator) freeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for start, b := range c.live {
		delete(c.live, start)
		Allocator.Free(b)
	}
}

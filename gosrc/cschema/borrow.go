package cschema

/*
#include "gda.h"
*/
import "C"
import "github.com/godevarrow/godevarrow/gosrc/errs"

// BorrowSchema fills out with a shallow copy of the schema at src whose
// release frees nothing (it only marks out released). It is for a consumer
// that takes a schema and never releases it (libcudf's from_arrow_device
// keeps the schema it is handed and never calls its release): losing the
// copy then costs nothing, while src stays its producer's, to be released
// as usual once the consumer is done reading it. out must not be read after
// src is released.
func BorrowSchema(src, out *CArrowSchema) error {
	if src.release == nil {
		return errs.Errorf(errs.ErrInvalid, "cannot borrow a schema that was released")
	}
	*out = *src
	out.release = (*[0]byte)(C.gda_borrowed_schema_release)
	out.private_data = nil
	return nil
}

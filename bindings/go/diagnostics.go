package shardplan

/*
#include <shardplan/shardplan.h>
*/
import "C"

import (
	"strconv"
	"strings"
	"unsafe"
)

// FixOperation is one operation of a Diagnostic's Fix: an RFC 6902 JSON
// Patch operation on the document. Since 0.7.
type FixOperation struct {
	Op   string // "move" (the value at From to Path) or "replace" (the value at Path by Value)
	Path string // RFC 6901 JSON pointer the operation writes
	// From is the JSON pointer a "move" reads; nil when the operation has
	// none.
	From *string
	// Value is the new value as JSON text (`"tp"` with its quotes, or
	// `["layers.*.mlp.experts.[0-9]"]`); nil when the operation has none.
	Value *string
}

// String returns the operation as a compact JSON object, the bytes the
// result JSON has for it: {"op":"move","from":"/a","path":"/b"}, with
// "from" and "value" only when present.
func (o FixOperation) String() string {
	var b strings.Builder
	b.WriteString(`{"op":`)
	writeJSONString(&b, o.Op)
	if o.From != nil {
		b.WriteString(`,"from":`)
		writeJSONString(&b, *o.From)
	}
	b.WriteString(`,"path":`)
	writeJSONString(&b, o.Path)
	if o.Value != nil {
		b.WriteString(`,"value":`)
		b.WriteString(*o.Value)
	}
	b.WriteByte('}')
	return b.String()
}

// MarshalJSON encodes the operation as its RFC 6902 object (String), so
// that json.Marshal(d.Fix) is a JSON Patch document.
func (o FixOperation) MarshalJSON() ([]byte, error) {
	return []byte(o.String()), nil
}

// writeJSONString writes s as a JSON string, escaped as the result JSON
// escapes it: quote, backslash and control characters; other bytes as
// they are.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// DiagnosticGroup is a set of diagnostics with one cause: the same code at
// the same declaration (the same Pointer, or none), as one over-wide
// native pattern gives one diagnostic per module it should not have
// matched. Every diagnostic is in exactly one group. Since 0.7.
type DiagnosticGroup struct {
	Code     string
	Severity Severity
	Pointer  *string // RFC 6901 JSON pointer; nil when its diagnostics have none
	Count    int     // its diagnostics
	// Listed holds their indexes into Diagnostics (for Diagnostic(i)), in
	// order; len(Listed) == Count.
	Listed []int
}

// String formats the group on one line: "error[code] xCOUNT", then
// ` (at "pointer")` when it has a JSON pointer.
func (g DiagnosticGroup) String() string {
	s := g.Severity.String() + "[" + g.Code + "] x" + strconv.Itoa(g.Count)
	if g.Pointer != nil {
		s += " (at " + strconv.Quote(*g.Pointer) + ")"
	}
	return s
}

// diagnosticFix reads the fix of diagnostic i; nil when it has none.
func (r *Result) diagnosticFix(i C.size_t) ([]FixOperation, error) {
	var n C.size_t
	if err := takeError(C.sp_result_diagnostic_fix_count(r.ptr, i, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	fix := make([]FixOperation, 0, int(n))
	for k := C.size_t(0); k < n; k++ {
		var co C.sp_fix_operation
		if err := takeError(C.sp_result_diagnostic_fix(r.ptr, i, k, &co)); err != nil {
			return nil, err
		}
		fix = append(fix, FixOperation{
			Op:    goString(co.op),
			Path:  goString(co.path),
			From:  goOptString(co.from),
			Value: goOptString(co.value),
		})
	}
	return fix, nil
}

// copyGroups copies the diagnostic groups of the library's result into r.
// Called by newResult, before r is shared.
func (r *Result) copyGroups() error {
	var n C.size_t
	if err := takeError(C.sp_result_group_count(r.ptr, &n)); err != nil {
		return err
	}
	if n > 0 {
		r.groups = make([]DiagnosticGroup, 0, int(n))
	}
	for i := C.size_t(0); i < n; i++ {
		g, err := r.group(i)
		if err != nil {
			return err
		}
		r.groups = append(r.groups, g)
	}
	return nil
}

func (r *Result) group(i C.size_t) (DiagnosticGroup, error) {
	var cg C.sp_diagnostic_group
	if err := takeError(C.sp_result_group(r.ptr, i, &cg)); err != nil {
		return DiagnosticGroup{}, err
	}
	g := DiagnosticGroup{
		Code:     goString(cg.code),
		Severity: Severity(cg.severity),
		Pointer:  goOptString(cg.pointer),
		Count:    int(cg.count),
	}
	if cg.listed != nil && cg.num_listed > 0 {
		listed := unsafe.Slice((*C.size_t)(unsafe.Pointer(cg.listed)), int(cg.num_listed))
		g.Listed = make([]int, len(listed))
		for k, v := range listed {
			g.Listed[k] = int(v)
		}
	}
	return g, nil
}

// Groups returns the diagnostic groups in the order of their first
// diagnostic (the result JSON's "groups"); empty (nil) when there is no
// diagnostic. The slice is a copy, and so is each group's Listed.
func (r *Result) Groups() []DiagnosticGroup {
	out := append([]DiagnosticGroup(nil), r.groups...)
	for i := range out {
		out[i].Listed = append([]int(nil), out[i].Listed...)
	}
	return out
}

// Group reads diagnostic group i from the library's result; an index out
// of range is a *Error with CodeOutOfRange (from the library, or from the
// binding for a negative i).
func (r *Result) Group(i int) (DiagnosticGroup, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return DiagnosticGroup{}, closedError("Result.Group")
	}
	if i < 0 {
		return DiagnosticGroup{}, negativeIndex("group", i, len(r.groups))
	}
	return r.group(C.size_t(i))
}

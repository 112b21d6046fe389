// Package shardplan is the Go binding of shardplan's C ABI (version 1),
// declared in capi/include/shardplan/shardplan.h.
//
// shardplan checks a shape-only description of a model (a shardplan.v1
// JSON document, see docs/format.md) and reports which modules own their
// sharding layout, or every problem found. Parse a document (or build one
// with a Builder), Check it, and read the Result:
//
//	doc, err := shardplan.Parse(jsonBytes, nil)
//	if err != nil { ... }          // only API misuse or out of memory
//	defer doc.Close()
//	res, err := doc.Check(nil)
//	if err != nil { ... }
//	defer res.Close()
//	if !res.OK() {
//		fmt.Println(res.Diagnostics()[0]) // the reference framework's error
//	}
//
// Findings about a document, even malformed JSON, are diagnostics in the
// Result, not errors. An error returned by this package is a *Error (an
// sp_error of the library: its Code and Message), an error wrapping
// ErrClosed (a method called on a closed handle) or one wrapping
// ErrIncompatibleABI (the loaded library has another C ABI version).
//
// Handles (Document, Result, Layout, Builder) own library memory. Close
// frees it; Close is idempotent, and a finalizer closes a handle that is
// garbage collected without it. A method called on a closed handle returns
// an error wrapping ErrClosed and never calls into the library. Documents
// and Results may be used by several goroutines at once; a Builder or a
// Layout serializes its own methods.
//
// Every string is copied: Go strings into C memory for the duration of a
// call, and library strings into Go strings before a method returns.
package shardplan

/*
// Where the header and the library come from: cgo_pkgconfig.go (pkg-config,
// the default) or cgo_checkout.go (build tag shardplan_checkout).
#include <stdlib.h>
#include <shardplan/shardplan.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// ExpectedABIVersion is the C ABI version this binding is written for. The
// library's sp_abi_version() must return exactly this value.
const ExpectedABIVersion uint32 = 1

// The header this package is compiled against must describe the same ABI:
// if SP_ABI_VERSION is not ExpectedABIVersion this index is out of bounds
// and the package does not compile.
var _ = [1]struct{}{}[C.SP_ABI_VERSION-ExpectedABIVersion]

// ErrIncompatibleABI is wrapped by the error returned when the loaded
// libshardplan has another C ABI version than ExpectedABIVersion.
var ErrIncompatibleABI = errors.New("shardplan: incompatible libshardplan")

// ErrClosed is wrapped by the error a method returns when it is called on a
// handle that has been closed.
var ErrClosed = errors.New("use of closed handle")

var (
	abiOnce sync.Once
	abiErr  error
)

// checkABI compares the ABI version found in the loaded library with the
// one this binding expects.
func checkABI(found uint32) error {
	if found != ExpectedABIVersion {
		return fmt.Errorf("%w: this Go binding expects C ABI version %d, "+
			"but the loaded libshardplan has C ABI version %d", ErrIncompatibleABI, ExpectedABIVersion, found)
	}
	return nil
}

// ensureABI checks the loaded library once, before the first handle is
// made; every later call returns the same answer.
func ensureABI() error {
	abiOnce.Do(func() { abiErr = checkABI(ABIVersion()) })
	return abiErr
}

// ABIVersion returns the C ABI version of the loaded library
// (sp_abi_version).
func ABIVersion() uint32 { return uint32(C.sp_abi_version()) }

// Version returns the release of the loaded library as
// "MAJOR.MINOR.PATCH" (sp_version_string).
func Version() string { return C.GoString(C.sp_version_string()) }

// ---- Errors -----------------------------------------------------------------

// ErrorCode is the code of an sp_error.
type ErrorCode int

// The sp_error_code values.
const (
	CodeOK              ErrorCode = C.SP_OK
	CodeNullArgument    ErrorCode = C.SP_ERROR_NULL_ARGUMENT    // a required argument was NULL (nil)
	CodeInvalidArgument ErrorCode = C.SP_ERROR_INVALID_ARGUMENT // a value is out of range or malformed
	CodeOutOfRange      ErrorCode = C.SP_ERROR_OUT_OF_RANGE     // an index past the end
	CodeOutOfMemory     ErrorCode = C.SP_ERROR_OUT_OF_MEMORY
	CodeInternal        ErrorCode = C.SP_ERROR_INTERNAL // a bug in shardplan
)

// String returns the code's name without prefix, e.g. "INVALID_ARGUMENT".
func (c ErrorCode) String() string {
	switch c {
	case CodeOK:
		return "OK"
	case CodeNullArgument:
		return "NULL_ARGUMENT"
	case CodeInvalidArgument:
		return "INVALID_ARGUMENT"
	case CodeOutOfRange:
		return "OUT_OF_RANGE"
	case CodeOutOfMemory:
		return "OUT_OF_MEMORY"
	case CodeInternal:
		return "INTERNAL"
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is an sp_error reported by the library: the API was misused or
// memory ran out. Use errors.As to get it from a returned error.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string {
	return "shardplan: " + e.Code.String() + ": " + e.Message
}

// takeError converts an sp_error into a *Error and frees it; nil stays nil.
func takeError(e *C.sp_error) error {
	if e == nil {
		return nil
	}
	err := &Error{
		Code:    ErrorCode(C.sp_error_code_of(e)),
		Message: C.GoString(C.sp_error_message(e)),
	}
	C.sp_error_delete(e)
	return err
}

func closedError(method string) error {
	return fmt.Errorf("shardplan: %s: %w", method, ErrClosed)
}

// ---- C memory for arguments -------------------------------------------------

// cmem holds the C memory that the arguments of one library call are copied
// into (the library copies what it keeps before returning); free releases
// all of it. No Go pointer is ever handed to the library.
type cmem struct{ ptrs []unsafe.Pointer }

func (m *cmem) free() {
	for _, p := range m.ptrs {
		C.free(p)
	}
	m.ptrs = nil
}

// alloc returns n bytes (at least one) of C memory, freed by free.
func (m *cmem) alloc(n uintptr) unsafe.Pointer {
	if n == 0 {
		n = 1
	}
	p := C.malloc(C.size_t(n)) // cgo's malloc never returns nil: it aborts
	m.ptrs = append(m.ptrs, p)
	return p
}

func (m *cmem) str(s string) C.sp_str {
	if len(s) == 0 {
		return C.sp_str{}
	}
	p := m.alloc(uintptr(len(s)))
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	return C.sp_str{data: (*C.char)(p), size: C.size_t(len(s))}
}

func (m *cmem) bytes(b []byte) C.sp_str {
	if len(b) == 0 {
		return C.sp_str{}
	}
	p := m.alloc(uintptr(len(b)))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return C.sp_str{data: (*C.char)(p), size: C.size_t(len(b))}
}

// strs copies a list of strings into a C array of sp_str; an empty list is
// (NULL, 0).
func (m *cmem) strs(list []string) (*C.sp_str, C.size_t) {
	if len(list) == 0 {
		return nil, 0
	}
	p := m.alloc(uintptr(len(list)) * unsafe.Sizeof(C.sp_str{}))
	arr := unsafe.Slice((*C.sp_str)(p), len(list))
	for i, s := range list {
		arr[i] = m.str(s)
	}
	return (*C.sp_str)(p), C.size_t(len(list))
}

// goString copies a library string; an absent one is "".
func goString(s C.sp_str) string {
	if s.data == nil || s.size == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(s.data)), int(s.size)))
}

// goOptString copies a library string that may be absent (data == NULL).
func goOptString(s C.sp_str) *string {
	if s.data == nil {
		return nil
	}
	v := goString(s)
	return &v
}

// ---- Documents --------------------------------------------------------------

// ParseOptions are limits that refuse hostile input while parsing
// (docs/format.md, section 5). A zero field, or nil options, means the
// library's default.
type ParseOptions struct {
	MaxPaths     uint64 // module paths; 0: default 10,000,000
	MaxFQNBytes  uint64 // total bytes of module FQNs; 0: default 2^30
	MaxJSONDepth uint32 // nesting of arrays/objects; 0: default 64
}

func (o *ParseOptions) c() *C.sp_parse_options {
	if o == nil {
		return nil
	}
	return &C.sp_parse_options{
		max_paths:      C.uint64_t(o.MaxPaths),
		max_fqn_bytes:  C.uint64_t(o.MaxFQNBytes),
		max_json_depth: C.uint32_t(o.MaxJSONDepth),
	}
}

// Document is a parsed (or built) shardplan.v1 document.
type Document struct {
	mu  sync.RWMutex
	ptr *C.sp_document
}

func newDocument(p *C.sp_document) *Document {
	d := &Document{ptr: p}
	runtime.SetFinalizer(d, (*Document).Close)
	return d
}

// Parse parses a shardplan.v1 document. The text is copied and not
// retained. A malformed document is not an error: IsValid reports false and
// Check reports the single invalid-document diagnostic. opts may be nil.
func Parse(json []byte, opts *ParseOptions) (*Document, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	var m cmem
	defer m.free()
	var out *C.sp_document
	if err := takeError(C.sp_document_parse(m.bytes(json), opts.c(), &out)); err != nil {
		return nil, err
	}
	return newDocument(out), nil
}

// IsValid reports whether the document parsed.
func (d *Document) IsValid() (bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ptr == nil {
		return false, closedError("Document.IsValid")
	}
	var valid C.int
	if err := takeError(C.sp_document_is_valid(d.ptr, &valid)); err != nil {
		return false, err
	}
	return valid != 0, nil
}

// CheckOptions tune Check; nil means the defaults.
type CheckOptions struct {
	// Threads is the number of worker threads for the parallel phases;
	// 0 uses all cores. Results do not depend on it.
	Threads uint32
}

// Check checks the document: module-owned layouts, claims and, when the
// document has a plan, the final plan. A document may be checked any number
// of times, from several goroutines at once. opts may be nil.
func (d *Document) Check(opts *CheckOptions) (*Result, error) {
	return d.run("Document.Check", opts, false)
}

// Plan makes the final plan from the document's owners, templates and
// overrides and checks it (ownership, the plan checks, shapes), then
// computes the memory per device and the communication the plan implies
// (docs planner-v1, `shardplan plan`). A document that gives a plan of its
// own is checked as Check does, and no plan is made. The Result then also
// has Memory, PlanEntries and CommunicationRecords, and its JSON has
// "plan", "provenance", "memory", "communication" and "collectives". A
// document may be planned any number of times, from several goroutines at
// once. opts may be nil.
func (d *Document) Plan(opts *CheckOptions) (*Result, error) {
	return d.run("Document.Plan", opts, true)
}

// run is Check (plan false) or Plan (plan true).
func (d *Document) run(method string, opts *CheckOptions, plan bool) (*Result, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ptr == nil {
		return nil, closedError(method)
	}
	var copts *C.sp_check_options
	if opts != nil {
		copts = &C.sp_check_options{threads: C.uint32_t(opts.Threads)}
	}
	var out *C.sp_result
	var e *C.sp_error
	if plan {
		e = C.sp_document_plan(d.ptr, copts, &out)
	} else {
		e = C.sp_document_check(d.ptr, copts, &out)
	}
	if err := takeError(e); err != nil {
		return nil, err
	}
	return newResult(out)
}

// Close frees the document. Results checked from it stay valid. Close is
// idempotent and always returns nil.
func (d *Document) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ptr != nil {
		C.sp_document_delete(d.ptr)
		d.ptr = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// ---- Results ----------------------------------------------------------------

// Severity is a diagnostic's severity.
type Severity int

// The sp_severity values.
const (
	SeverityError   Severity = C.SP_SEVERITY_ERROR
	SeverityWarning Severity = C.SP_SEVERITY_WARNING
	SeverityInfo    Severity = C.SP_SEVERITY_INFO
)

// String returns "error", "warning" or "info", as in the result JSON.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Diagnostic is one finding about a document. The optional fields are nil
// when absent (null, or no key, in the result JSON); the root module's FQN
// is present and empty, so FQN != nil && *FQN == "".
type Diagnostic struct {
	Code      string // stable kebab-case code, e.g. "shared-conflict"
	Severity  Severity
	Message   string  // for ownership errors, the reference's exact message
	FQN       *string // the module the finding is about ("" is the root)
	Parameter *string // the parameter's full name
	Pointer   *string // RFC 6901 JSON pointer of the declaration at fault
	// Help says what to change, where the engine knows ("did you mean
	// 'tp'? (the mesh's axes are 'tp')"); nil when it does not. Since 0.7.
	Help *string
	// Fix is an RFC 6902 JSON Patch that fixes the finding: applied to the
	// document in order, its operations make the finding go away without
	// adding an error. nil when there is none. Since 0.7.
	Fix []FixOperation
}

// String formats the diagnostic on one line: "error[code]: message", then
// ` (at "pointer")` when it has a JSON pointer. It leaves out Help and Fix.
func (d Diagnostic) String() string {
	s := d.Severity.String() + "[" + d.Code + "]: " + d.Message
	if d.Pointer != nil {
		s += " (at " + strconv.Quote(*d.Pointer) + ")"
	}
	return s
}

// Result is the outcome of checking or planning a document. OK, Len,
// Diagnostics (with their help and fix), Groups and, for a planned result,
// Memory, Training, PlanEntries and CommunicationRecords are copied into Go memory
// when the result is made and keep working after Close. JSON is made by the library on first use (for a large model that
// costs a good part of the check's time, so a caller that never asks for it
// does not pay) and then cached. Diagnostic, Group, PlanEntry and
// CommunicationRecord read the library's result.
type Result struct {
	mu       sync.RWMutex
	ptr      *C.sp_result
	ok       bool
	diags    []Diagnostic
	groups   []DiagnosticGroup     // diagnostics.go
	memory   *Memory               // nil: not planned
	training *Training             // nil: none (plan.go)
	plan     []PlanEntry           // plan.go
	comm     []CommunicationRecord // plan.go
	jsonOnce sync.Once
	json     string
}

// newResult takes ownership of p and copies its contents out.
func newResult(p *C.sp_result) (*Result, error) {
	r := &Result{ptr: p}
	runtime.SetFinalizer(r, (*Result).Close)
	var ok C.int
	if err := takeError(C.sp_result_ok(p, &ok)); err != nil {
		r.Close()
		return nil, err
	}
	r.ok = ok != 0
	var n C.size_t
	if err := takeError(C.sp_result_diagnostic_count(p, &n)); err != nil {
		r.Close()
		return nil, err
	}
	r.diags = make([]Diagnostic, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		d, err := r.diagnostic(i)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.diags = append(r.diags, d)
	}
	if err := r.copyGroups(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.copyPlan(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Result) diagnostic(i C.size_t) (Diagnostic, error) {
	var cd C.sp_diagnostic
	if err := takeError(C.sp_result_diagnostic(r.ptr, i, &cd)); err != nil {
		return Diagnostic{}, err
	}
	var help C.sp_str
	if err := takeError(C.sp_result_diagnostic_help(r.ptr, i, &help)); err != nil {
		return Diagnostic{}, err
	}
	fix, err := r.diagnosticFix(i)
	if err != nil {
		return Diagnostic{}, err
	}
	return Diagnostic{
		Code:      goString(cd.code),
		Severity:  Severity(cd.severity),
		Message:   goString(cd.message),
		FQN:       goOptString(cd.fqn),
		Parameter: goOptString(cd.parameter),
		Pointer:   goOptString(cd.pointer),
		Help:      goOptString(help),
		Fix:       fix,
	}, nil
}

// OK reports whether the document has no error diagnostic.
func (r *Result) OK() bool { return r.ok }

// Len returns the number of diagnostics.
func (r *Result) Len() int { return len(r.diags) }

// Diagnostics returns the diagnostics in evaluation order: the first one is
// the reference framework's error. The slice is a copy, and so is each
// diagnostic's Fix.
func (r *Result) Diagnostics() []Diagnostic {
	out := append([]Diagnostic(nil), r.diags...)
	for i := range out {
		if out[i].Fix != nil {
			out[i].Fix = append([]FixOperation(nil), out[i].Fix...)
		}
	}
	return out
}

// Diagnostic reads diagnostic i from the library's result; an index out of
// range is a *Error with CodeOutOfRange (from the library, or from the
// binding for a negative i).
func (r *Result) Diagnostic(i int) (Diagnostic, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return Diagnostic{}, closedError("Result.Diagnostic")
	}
	if i < 0 {
		return Diagnostic{}, negativeIndex("diagnostic", i, len(r.diags))
	}
	return r.diagnostic(C.size_t(i))
}

// JSON returns the whole result as compact JSON (schema
// shardplan.result.v1, the bytes `shardplan check --format json` prints,
// or `shardplan plan --format json` for a planned result).
// The first call copies it out of the library and later calls return the
// same string. Read it before Close: on a Result closed before JSON was
// ever called, JSON returns "".
func (r *Result) JSON() string {
	r.jsonOnce.Do(func() {
		r.mu.RLock()
		defer r.mu.RUnlock()
		if r.ptr == nil {
			return
		}
		var js C.sp_str
		// sp_result_json fails only on a NULL result or out of memory; the
		// empty string then says there is no text.
		if err := takeError(C.sp_result_json(r.ptr, &js)); err == nil {
			r.json = goString(js)
		}
	})
	return r.json
}

// Close frees the library's result. OK, Len, Diagnostics, Groups, Memory,
// PlanEntries and CommunicationRecords stay available, and JSON if it was
// called before. Close is idempotent and always returns nil.
func (r *Result) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		C.sp_result_delete(r.ptr)
		r.ptr = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

package shardplan

/*
#include <stdlib.h>
#include <shardplan/shardplan.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
)

// Port is one of the maps of a Layout.
type Port int

// The sp_port values.
const (
	PortParams Port = C.SP_PORT_PARAMS
	PortInSrc  Port = C.SP_PORT_IN_SRC
	PortInDst  Port = C.SP_PORT_IN_DST
	PortOutSrc Port = C.SP_PORT_OUT_SRC
	PortOutDst Port = C.SP_PORT_OUT_DST
)

// String returns the port's JSON key: "params", "in_src", "in_dst",
// "out_src" or "out_dst".
func (p Port) String() string {
	switch p {
	case PortParams:
		return "params"
	case PortInSrc:
		return "in_src"
	case PortInDst:
		return "in_dst"
	case PortOutSrc:
		return "out_src"
	case PortOutDst:
		return "out_dst"
	}
	return fmt.Sprintf("Port(%d)", int(p))
}

// Layout is a module sharding spec under construction: the ports params,
// in_src, in_dst, out_src and out_dst (each absent until declared) and
// out_names. A Builder copies a layout when it is passed in, so one layout
// may be reused for several calls.
type Layout struct {
	mu  sync.Mutex
	ptr *C.sp_layout
}

// NewLayout makes an empty layout.
func NewLayout() (*Layout, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	var out *C.sp_layout
	if err := takeError(C.sp_layout_create(&out)); err != nil {
		return nil, err
	}
	l := &Layout{ptr: out}
	runtime.SetFinalizer(l, (*Layout).Close)
	return l, nil
}

// do runs one library call on the open layout with a fresh cmem.
func (l *Layout) do(method string, call func(p *C.sp_layout, m *cmem) *C.sp_error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ptr == nil {
		return closedError("Layout." + method)
	}
	var m cmem
	defer m.free()
	return takeError(call(l.ptr, &m))
}

// lock locks the layout for a Builder call that reads it and returns its
// handle and the unlock function. A nil layout gives a NULL handle.
func (l *Layout) lock(method string) (*C.sp_layout, func(), error) {
	if l == nil {
		return nil, func() {}, nil
	}
	l.mu.Lock()
	if l.ptr == nil {
		l.mu.Unlock()
		return nil, nil, closedError(method + ": layout")
	}
	return l.ptr, l.mu.Unlock, nil
}

// Declare declares port as present (an empty map {} until entries are
// added); declaring it again does nothing.
func (l *Layout) Declare(port Port) error {
	return l.do("Declare", func(p *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_layout_declare(p, C.sp_port(port))
	})
}

// AddEntry adds entry name to port (declaring the port) with no placement
// yet, like "x": {}. An existing entry is kept; entries keep insertion
// order.
func (l *Layout) AddEntry(port Port, name string) error {
	return l.do("AddEntry", func(p *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_layout_add_entry(p, C.sp_port(port), m.str(name))
	})
}

// SetPlacement places entry name of port (created if needed) on mesh axis
// axis. placement is "R", "S(dim)", "P" or "P(op)" (docs/format.md,
// section 3); a malformed placement or an axis placed twice is a *Error with
// CodeInvalidArgument.
func (l *Layout) SetPlacement(port Port, name, axis, placement string) error {
	return l.do("SetPlacement", func(p *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_layout_set_placement(p, C.sp_port(port), m.str(name), m.str(axis), m.str(placement))
	})
}

// SetOutNames sets out_names, replacing any earlier list.
func (l *Layout) SetOutNames(names []string) error {
	return l.do("SetOutNames", func(p *C.sp_layout, m *cmem) *C.sp_error {
		arr, n := m.strs(names)
		return C.sp_layout_set_out_names(p, arr, n)
	})
}

// Close frees the layout. Close is idempotent and always returns nil.
func (l *Layout) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ptr != nil {
		C.sp_layout_delete(l.ptr)
		l.ptr = nil
		runtime.SetFinalizer(l, nil)
	}
	return nil
}

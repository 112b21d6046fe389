package shardplan

/*
#include <stdint.h>
#include <stdlib.h>
#include <shardplan/shardplan.h>
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// ParallelSpec is a module's execution protocol: a binding kind ("tp",
// "mesh", "none", ...) and the mesh axes it communicates on.
type ParallelSpec struct {
	BindingKind string
	Axes        []string
}

// c copies the spec into C memory; nil stays NULL.
func (s *ParallelSpec) c(m *cmem) *C.sp_parallel_spec {
	if s == nil {
		return nil
	}
	p := (*C.sp_parallel_spec)(m.alloc(unsafe.Sizeof(C.sp_parallel_spec{})))
	axes, n := m.strs(s.Axes)
	*p = C.sp_parallel_spec{binding_kind: m.str(s.BindingKind), axes: axes, num_axes: n}
	return p
}

// Builder builds a document programmatically: checking the built document
// gives the same result as checking its JSON twin (see JSON), entries in
// the order they were added. Names that must be unique (axes, ids, child
// and parameter names of a module, FQNs) are refused when repeated (a *Error
// with CodeInvalidArgument); references (child module ids, parameter ids,
// the root) are resolved by Build, and a dangling one is reported there as
// the invalid-document diagnostic, with a JSON pointer into JSON's text.
type Builder struct {
	mu  sync.Mutex
	ptr *C.sp_builder
}

// NewBuilder makes an empty builder.
func NewBuilder() (*Builder, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	var out *C.sp_builder
	if err := takeError(C.sp_builder_create(&out)); err != nil {
		return nil, err
	}
	b := &Builder{ptr: out}
	runtime.SetFinalizer(b, (*Builder).Close)
	return b, nil
}

// do runs one library call on the open builder with a fresh cmem.
func (b *Builder) do(method string, call func(p *C.sp_builder, m *cmem) *C.sp_error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ptr == nil {
		return closedError("Builder." + method)
	}
	var m cmem
	defer m.free()
	return takeError(call(b.ptr, &m))
}

// doLayout is do for a call that reads a layout (nil passes NULL). The
// builder is locked before the layout; a Layout never locks a Builder.
func (b *Builder) doLayout(method string, l *Layout, call func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ptr == nil {
		return closedError("Builder." + method)
	}
	lp, unlock, err := l.lock("Builder." + method)
	if err != nil {
		return err
	}
	defer unlock()
	var m cmem
	defer m.free()
	return takeError(call(b.ptr, lp, &m))
}

// AddAxis appends mesh axis name of size devices (>= 1).
func (b *Builder) AddAxis(name string, size int64) error {
	return b.do("AddAxis", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_add_axis(p, m.str(name), C.int64_t(size))
	})
}

// AddParameter adds parameter identity id. dtype may be empty (the default,
// float32). shape lists the dimensions (>= 0): a nil shape is unknown, an
// empty non-nil shape ([]int64{}) is a scalar.
func (b *Builder) AddParameter(id string, shape []int64, dtype string) error {
	return b.do("AddParameter", func(p *C.sp_builder, m *cmem) *C.sp_error {
		var dims *C.int64_t
		if shape != nil {
			dims = (*C.int64_t)(m.alloc(uintptr(len(shape)) * unsafe.Sizeof(C.int64_t(0))))
			arr := unsafe.Slice(dims, len(shape))
			for i, d := range shape {
				arr[i] = C.int64_t(d)
			}
		}
		return C.sp_builder_add_parameter(p, m.str(id), dims, C.size_t(len(shape)), m.str(dtype))
	})
}

// AddModule adds module identity id; typ (the class name) may be empty.
func (b *Builder) AddModule(id, typ string) error {
	return b.do("AddModule", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_add_module(p, m.str(id), m.str(typ))
	})
}

// AddForwardArg appends name ("x", "*args", "**kwargs") to the module's
// forward signature.
func (b *Builder) AddForwardArg(module, name string) error {
	return b.do("AddForwardArg", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_add_forward_arg(p, m.str(module), m.str(name))
	})
}

// AddChild registers module child as child name of module.
func (b *Builder) AddChild(module, name, child string) error {
	return b.do("AddChild", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_add_child(p, m.str(module), m.str(name), m.str(child))
	})
}

// AddModuleParam registers parameter identity parameter as parameter name
// of module.
func (b *Builder) AddModuleParam(module, name, parameter string) error {
	return b.do("AddModuleParam", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_add_module_param(p, m.str(module), m.str(name), m.str(parameter))
	})
}

// SetModuleParallel sets the module's own parallel spec; nil clears it.
func (b *Builder) SetModuleParallel(module string, parallel *ParallelSpec) error {
	return b.do("SetModuleParallel", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_set_module_parallel(p, m.str(module), parallel.c(m))
	})
}

// SetFamily makes the module a family member: parallel tells whether it is
// mesh-parallel, sharding is its sharding provider's layout (nil: it
// provides none).
func (b *Builder) SetFamily(module string, parallel bool, sharding *Layout) error {
	par := C.int(0)
	if parallel {
		par = 1
	}
	return b.doLayout("SetFamily", sharding, func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_builder_set_family(p, m.str(module), par, lp)
	})
}

// SetFamilyCached sets the layout already applied to a family member (the
// module must be a family member): sharding is required, parallel may be
// nil.
func (b *Builder) SetFamilyCached(module string, sharding *Layout, parallel *ParallelSpec) error {
	return b.doLayout("SetFamilyCached", sharding, func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_builder_set_family_cached(p, m.str(module), lp, parallel.c(m))
	})
}

// SetRoot sets the root module id.
func (b *Builder) SetRoot(module string) error {
	return b.do("SetRoot", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_set_root(p, m.str(module))
	})
}

// AddProvider adds a model-adapter sharding provider for the module at
// fqn ("" is the root) with the given layout.
func (b *Builder) AddProvider(fqn string, layout *Layout) error {
	return b.doLayout("AddProvider", layout, func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_builder_add_provider(p, m.str(fqn), lp)
	})
}

// AddNative appends a native request: the glob patterns, the layout given
// to every module whose FQN matches one of them, and an optional parallel
// spec (nil: none).
func (b *Builder) AddNative(globs []string, sharding *Layout, parallel *ParallelSpec) error {
	return b.doLayout("AddNative", sharding, func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error {
		arr, n := m.strs(globs)
		return C.sp_builder_add_native(p, arr, n, lp, parallel.c(m))
	})
}

// DeclarePlan gives the document a final plan with no entries until some
// are added (an empty plan is checked too: it covers no parameter).
func (b *Builder) DeclarePlan() error {
	return b.do("DeclarePlan", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_declare_plan(p)
	})
}

// AddPlanEntry adds the final-plan layout of the module at fqn (the
// document then has a plan).
func (b *Builder) AddPlanEntry(fqn string, layout *Layout) error {
	return b.doLayout("AddPlanEntry", layout, func(p *C.sp_builder, lp *C.sp_layout, m *cmem) *C.sp_error {
		return C.sp_builder_add_plan_entry(p, m.str(fqn), lp)
	})
}

// SetTraining gives the document its training section (training-v1,
// docs/format.md "Training"): section is the section's JSON text, an object
// such as {"zero": 3, "device_memory": "80GiB"}. A section that is not an
// object, an invalid value in it, or a second section is a *Error with
// CodeInvalidArgument (nothing changes); what depends on the mesh
// (shard_axes, activations.tensor_axis) is checked by Build. Since 0.9.
func (b *Builder) SetTraining(section string) error {
	return b.do("SetTraining", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_set_training(p, m.str(section))
	})
}

// SetTrainingMap is SetTraining with the section as a map, encoded with
// encoding/json (an error from the encoder is returned as is, before any
// library call). Since 0.9.
func (b *Builder) SetTrainingMap(section map[string]any) error {
	text, err := json.Marshal(section)
	if err != nil {
		return err
	}
	return b.SetTraining(string(text))
}

// JSON returns the document built so far as shardplan.v1 JSON
// (pretty-printed). Diagnostics' JSON pointers for a built document refer
// to this text.
func (b *Builder) JSON() (string, error) {
	var s string
	err := b.do("JSON", func(p *C.sp_builder, m *cmem) *C.sp_error {
		var out C.sp_str
		if e := C.sp_builder_to_json(p, &out); e != nil {
			return e
		}
		s = goString(out)
		return nil
	})
	return s, err
}

// Build parses the document built so far, as Parse would parse JSON's
// text. The builder stays usable. opts may be nil.
func (b *Builder) Build(opts *ParseOptions) (*Document, error) {
	var out *C.sp_document
	err := b.do("Build", func(p *C.sp_builder, m *cmem) *C.sp_error {
		return C.sp_builder_build(p, opts.c(), &out)
	})
	if err != nil {
		return nil, err
	}
	return newDocument(out), nil
}

// Close frees the builder. Close is idempotent and always returns nil.
func (b *Builder) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ptr != nil {
		C.sp_builder_delete(b.ptr)
		b.ptr = nil
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

package shardplan

/*
#include <shardplan/shardplan.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Memory is the memory per device of a planned result (planner-v1, section
// 5). Devices are numbered row-major over the mesh axes; bytes are per
// device.
type Memory struct {
	Devices        uint64  // devices in the mesh
	UnshardedBytes uint64  // every parameter identity once, unsharded
	MaxBytes       uint64  // the most any device holds
	MinBytes       uint64  // the least any device holds
	MeanBytes      float64 // the mean over the devices
	MaxDevice      uint64  // the lowest device holding MaxBytes
	// PerDeviceBytes has one entry per device, in device order; nil when
	// the library lists none (meshes beyond 65,536 devices).
	PerDeviceBytes []uint64
}

// Training is the training memory of a result (training-v1, section 4;
// since 0.9), for a document with a training section: the worst device (the
// largest total, the lowest number on ties) by category, and the totals over
// devices. All in bytes per device; a category that does not apply is 0.
// Whether it fits (exceeds-device-memory, near-device-memory) is among the
// result's diagnostics.
type Training struct {
	WorstDevice uint64 // the worst device, numbered row-major over the mesh axes
	// WorstCoordinates has the worst device's coordinate on each mesh axis,
	// in mesh order.
	WorstCoordinates []uint64
	Params           uint64
	Grads            uint64
	Master           uint64
	Optimizer        uint64
	Gathered         uint64 // the largest FSDP unit, gathered (zero 3)
	Activations      uint64 // the same on every device
	Total            uint64
	MaxTotalBytes    uint64  // the largest total of any device
	MinTotalBytes    uint64  // the smallest total of any device
	MeanTotalBytes   float64 // the mean total over the devices
	// PerDeviceTotalBytes has each device's total, in device order; nil when
	// the library lists none (meshes beyond 65,536 devices).
	PerDeviceTotalBytes []uint64
}

// PlanEntry is one entry of a planned result's final plan: the module's FQN
// ("" is the root) and where the entry came from ("owned:model",
// "owned:family", "owned:native", "template:AXIS:PATTERN" (one per rule),
// "override"), joined with ", ". The layout itself is in the result's JSON
// ("plan").
type PlanEntry struct {
	FQN        string
	Provenance string
}

// CommunicationRecord is one transition a planned result implies
// (planner-v1, section 6): on port Port ("in:NAME" or "out:NAME") of the
// module at FQN, mesh axis Axis goes from placement From to To, which takes
// Collective ("all_gather", "slice", "all_reduce", "reduce_scatter",
// "all_to_all", "none" or "unsupported").
type CommunicationRecord struct {
	FQN        string
	Port       string
	Axis       string
	From       string
	To         string
	Collective string
}

// copyPlan copies the memory, training memory, plan entries and
// communication records of the library's result into r (nothing for a
// result that was not planned).
// Called by newResult, before r is shared.
func (r *Result) copyPlan() error {
	var cm C.sp_memory
	var present C.int
	if err := takeError(C.sp_result_memory(r.ptr, &cm, &present)); err != nil {
		return err
	}
	if present != 0 {
		m := &Memory{
			Devices:        uint64(cm.devices),
			UnshardedBytes: uint64(cm.unsharded_bytes),
			MaxBytes:       uint64(cm.max_bytes),
			MinBytes:       uint64(cm.min_bytes),
			MeanBytes:      float64(cm.mean_bytes),
			MaxDevice:      uint64(cm.max_device),
		}
		if cm.per_device_bytes != nil {
			n := int(cm.num_devices_listed)
			m.PerDeviceBytes = make([]uint64, n)
			for i, v := range unsafe.Slice((*C.uint64_t)(unsafe.Pointer(cm.per_device_bytes)), n) {
				m.PerDeviceBytes[i] = uint64(v)
			}
		}
		r.memory = m
	}

	var ct C.sp_training
	if err := takeError(C.sp_result_training(r.ptr, &ct, &present)); err != nil {
		return err
	}
	if present != 0 {
		r.training = &Training{
			WorstDevice:         uint64(ct.worst_device),
			WorstCoordinates:    copyUint64s(ct.worst_coordinates, ct.num_axes),
			Params:              uint64(ct.params),
			Grads:               uint64(ct.grads),
			Master:              uint64(ct.master),
			Optimizer:           uint64(ct.optimizer),
			Gathered:            uint64(ct.gathered),
			Activations:         uint64(ct.activations),
			Total:               uint64(ct.total),
			MaxTotalBytes:       uint64(ct.max_total_bytes),
			MinTotalBytes:       uint64(ct.min_total_bytes),
			MeanTotalBytes:      float64(ct.mean_total_bytes),
			PerDeviceTotalBytes: copyUint64s(ct.per_device_total_bytes, ct.num_devices_listed),
		}
		if r.training.WorstCoordinates == nil {
			r.training.WorstCoordinates = []uint64{}
		}
	}

	var n C.size_t
	if err := takeError(C.sp_result_plan_entry_count(r.ptr, &n)); err != nil {
		return err
	}
	if n > 0 {
		r.plan = make([]PlanEntry, 0, int(n))
	}
	for i := C.size_t(0); i < n; i++ {
		e, err := r.planEntry(i)
		if err != nil {
			return err
		}
		r.plan = append(r.plan, e)
	}

	if err := takeError(C.sp_result_communication_count(r.ptr, &n)); err != nil {
		return err
	}
	if n > 0 {
		r.comm = make([]CommunicationRecord, 0, int(n))
	}
	for i := C.size_t(0); i < n; i++ {
		c, err := r.communicationRecord(i)
		if err != nil {
			return err
		}
		r.comm = append(r.comm, c)
	}
	return nil
}

// copyUint64s copies n values at p (owned by the library's result) into Go
// memory; nil when p is NULL.
func copyUint64s(p *C.uint64_t, n C.size_t) []uint64 {
	if p == nil {
		return nil
	}
	out := make([]uint64, int(n))
	for i, v := range unsafe.Slice(p, int(n)) {
		out[i] = uint64(v)
	}
	return out
}

func (r *Result) planEntry(i C.size_t) (PlanEntry, error) {
	var ce C.sp_plan_entry
	if err := takeError(C.sp_result_plan_entry(r.ptr, i, &ce)); err != nil {
		return PlanEntry{}, err
	}
	return PlanEntry{FQN: goString(ce.fqn), Provenance: goString(ce.provenance)}, nil
}

func (r *Result) communicationRecord(i C.size_t) (CommunicationRecord, error) {
	var cc C.sp_communication
	if err := takeError(C.sp_result_communication(r.ptr, i, &cc)); err != nil {
		return CommunicationRecord{}, err
	}
	return CommunicationRecord{
		FQN:        goString(cc.fqn),
		Port:       goString(cc.port),
		Axis:       goString(cc.axis),
		From:       goString(cc.from),
		To:         goString(cc.to),
		Collective: goString(cc.collective),
	}, nil
}

// Memory returns the memory per device of a planned result, or nil when
// there is none: the result was checked, not planned (or the document gave
// its own plan), or the mesh has more than 2^24 devices. The value is a
// copy.
func (r *Result) Memory() *Memory {
	if r.memory == nil {
		return nil
	}
	m := *r.memory
	m.PerDeviceBytes = append([]uint64(nil), r.memory.PerDeviceBytes...)
	if r.memory.PerDeviceBytes == nil {
		m.PerDeviceBytes = nil
	}
	return &m
}

// Training returns the training memory of a result (since 0.9), or nil when
// there is none: the document has no training section, no plan was made (a
// plan made by Plan, or the document's own plan once every check passed),
// or the mesh has more than 2^24 devices. The value is a copy.
func (r *Result) Training() *Training {
	if r.training == nil {
		return nil
	}
	t := *r.training
	t.WorstCoordinates = append([]uint64{}, r.training.WorstCoordinates...)
	if r.training.PerDeviceTotalBytes != nil {
		t.PerDeviceTotalBytes = append([]uint64(nil), r.training.PerDeviceTotalBytes...)
	}
	return &t
}

// PlanEntries returns the entries of the final plan in plan order; empty
// (nil) when the result was not planned. The slice is a copy.
func (r *Result) PlanEntries() []PlanEntry {
	return append([]PlanEntry(nil), r.plan...)
}

// CommunicationRecords returns the communication records in plan order,
// then ports, then mesh axes; empty (nil) when the result was not planned.
// The slice is a copy.
func (r *Result) CommunicationRecords() []CommunicationRecord {
	return append([]CommunicationRecord(nil), r.comm...)
}

// PlanEntry reads plan entry i from the library's result; an index out of
// range is a *Error with CodeOutOfRange (from the library, or from the
// binding for a negative i).
func (r *Result) PlanEntry(i int) (PlanEntry, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return PlanEntry{}, closedError("Result.PlanEntry")
	}
	if i < 0 {
		return PlanEntry{}, negativeIndex("plan entry", i, len(r.plan))
	}
	return r.planEntry(C.size_t(i))
}

// CommunicationRecord reads communication record i from the library's
// result; an index out of range is a *Error with CodeOutOfRange (from the
// library, or from the binding for a negative i).
func (r *Result) CommunicationRecord(i int) (CommunicationRecord, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return CommunicationRecord{}, closedError("Result.CommunicationRecord")
	}
	if i < 0 {
		return CommunicationRecord{}, negativeIndex("communication record", i, len(r.comm))
	}
	return r.communicationRecord(C.size_t(i))
}

// negativeIndex is the binding's own OUT_OF_RANGE error for an index below
// zero, worded like the library's.
func negativeIndex(what string, i, n int) error {
	return &Error{Code: CodeOutOfRange,
		Message: fmt.Sprintf("%s index %d out of range (the result has %d)", what, i, n)}
}

package shardplan

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// planDoc has one module-owned layout (embed) and a tp template for the two
// Linear modules; planned on a dp=2 x tp=4 mesh.
const planDoc = `{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
 "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
 "root": "model",
 "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
             "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
             "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
             "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
 "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
 "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}`

// plan parses and plans a document, closing both handles at the end of the
// test.
func plan(t *testing.T, doc []byte, opts *CheckOptions) *Result {
	t.Helper()
	d, err := Parse(doc, nil)
	must(t, err)
	t.Cleanup(func() { d.Close() })
	r, err := d.Plan(opts)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// planJSON is the part of a planned result's JSON that the accessors also
// give.
type planJSON struct {
	Plan *struct {
		Modules map[string]json.RawMessage `json:"modules"`
	} `json:"plan"`
	Provenance map[string][]string `json:"provenance"`
	Memory     *struct {
		Devices        uint64   `json:"devices"`
		UnshardedBytes uint64   `json:"unsharded_bytes"`
		MaxBytes       uint64   `json:"max_bytes"`
		MinBytes       uint64   `json:"min_bytes"`
		MeanBytes      float64  `json:"mean_bytes"`
		MaxDevice      uint64   `json:"max_device"`
		PerDeviceBytes []uint64 `json:"per_device_bytes"`
	} `json:"memory"`
	Communication []CommunicationRecord       `json:"communication"`
	Collectives   map[string]map[string]int64 `json:"collectives"`
}

func TestPlan(t *testing.T) {
	r := plan(t, []byte(planDoc), nil)
	if !r.OK() || r.Len() != 0 {
		t.Fatalf("OK %v, diagnostics %v", r.OK(), r.Diagnostics())
	}

	wantEntries := []PlanEntry{
		{FQN: "embed", Provenance: "owned:model"},
		{FQN: "up_proj", Provenance: "template:tp:up_proj"},
		{FQN: "down_proj", Provenance: "template:tp:down_proj"},
	}
	if got := r.PlanEntries(); !reflect.DeepEqual(got, wantEntries) {
		t.Fatalf("PlanEntries() = %+v, want %+v", got, wantEntries)
	}
	for i, want := range wantEntries {
		got, err := r.PlanEntry(i)
		if err != nil || got != want {
			t.Fatalf("PlanEntry(%d) = %+v, %v; want %+v", i, got, err, want)
		}
	}

	m := r.Memory()
	if m == nil {
		t.Fatal("Memory() = nil for a planned result")
	}
	if m.Devices != 8 || m.UnshardedBytes != 64*8*2+32*8*4+8*32*4 || len(m.PerDeviceBytes) != 8 {
		t.Fatalf("Memory() = %+v", *m)
	}
	maxB, minB, sum, maxDev := m.PerDeviceBytes[0], m.PerDeviceBytes[0], uint64(0), 0
	for i, b := range m.PerDeviceBytes {
		if b > maxB {
			maxB, maxDev = b, i
		}
		if b < minB {
			minB = b
		}
		sum += b
	}
	if m.MaxBytes != maxB || m.MinBytes != minB || m.MaxDevice != uint64(maxDev) ||
		m.MeanBytes != float64(sum)/float64(len(m.PerDeviceBytes)) {
		t.Fatalf("Memory() = %+v disagrees with its per-device bytes", *m)
	}
	// Every parameter is sharded 4 ways on tp and replicated on dp.
	if m.MaxBytes != 3072/4 || m.MinBytes != 3072/4 {
		t.Fatalf("Memory() = %+v, want 768 bytes on every device", *m)
	}
	// Memory returns a copy.
	m.PerDeviceBytes[0] = 1
	if r.Memory().PerDeviceBytes[0] != 768 {
		t.Fatal("Memory() shares its per-device slice")
	}

	wantComm := CommunicationRecord{FQN: "down_proj", Port: "out:output", Axis: "tp",
		From: "P", To: "R", Collective: "all_reduce"}
	comm := r.CommunicationRecords()
	found := false
	for i, c := range comm {
		found = found || c == wantComm
		got, err := r.CommunicationRecord(i)
		if err != nil || got != c {
			t.Fatalf("CommunicationRecord(%d) = %+v, %v; want %+v", i, got, err, c)
		}
	}
	if !found {
		t.Fatalf("CommunicationRecords() = %+v, want one %+v", comm, wantComm)
	}

	// The result JSON has the planning keys, and the accessors agree with it.
	text := r.JSON()
	for _, key := range []string{"plan", "provenance", "memory", "communication", "collectives"} {
		if !strings.Contains(text, `"`+key+`":`) {
			t.Fatalf("result JSON has no %q: %s", key, text)
		}
	}
	var got planJSON
	must(t, json.Unmarshal([]byte(text), &got))
	if got.Plan == nil || len(got.Plan.Modules) != len(wantEntries) || len(got.Provenance) != len(wantEntries) {
		t.Fatalf("plan/provenance in JSON: %s", text)
	}
	for _, e := range wantEntries {
		if strings.Join(got.Provenance[e.FQN], ", ") != e.Provenance {
			t.Fatalf("provenance of %q in JSON: %v, accessor: %q", e.FQN, got.Provenance[e.FQN], e.Provenance)
		}
	}
	jm := got.Memory
	m = r.Memory()
	if jm == nil || jm.Devices != m.Devices || jm.UnshardedBytes != m.UnshardedBytes ||
		jm.MaxBytes != m.MaxBytes || jm.MinBytes != m.MinBytes || jm.MeanBytes != m.MeanBytes ||
		jm.MaxDevice != m.MaxDevice || !reflect.DeepEqual(jm.PerDeviceBytes, m.PerDeviceBytes) {
		t.Fatalf("memory in JSON %+v, accessor %+v", jm, *m)
	}
	// (encoding/json matches the keys "fqn", "port", ... to the fields.)
	if !reflect.DeepEqual(got.Communication, comm) {
		t.Fatalf("communication in JSON %+v, accessor %+v", got.Communication, comm)
	}
	if got.Collectives["all_reduce"]["tp"] != 1 {
		t.Fatalf("collectives in JSON: %v", got.Collectives)
	}
}

func TestCheckedResultHasNoPlan(t *testing.T) {
	r := check(t, []byte(planDoc))
	if r.Memory() != nil || len(r.PlanEntries()) != 0 || len(r.CommunicationRecords()) != 0 {
		t.Fatalf("checked result: Memory %+v, %d entries, %d records",
			r.Memory(), len(r.PlanEntries()), len(r.CommunicationRecords()))
	}
	_, err := r.PlanEntry(0)
	wantCode(t, err, CodeOutOfRange)
	_, err = r.CommunicationRecord(0)
	wantCode(t, err, CodeOutOfRange)
	if strings.Contains(r.JSON(), `"memory"`) || strings.Contains(r.JSON(), `"plan"`) {
		t.Fatalf("checked result JSON has planning keys: %s", r.JSON())
	}

	// A malformed document planned: the invalid-document diagnostic, no plan.
	bad := plan(t, []byte(`{"schema": "shardplan.v1", "mesh": `), nil)
	if bad.OK() || bad.Len() != 1 || bad.Diagnostics()[0].Code != "invalid-document" ||
		bad.Memory() != nil || len(bad.PlanEntries()) != 0 || len(bad.CommunicationRecords()) != 0 {
		t.Fatalf("malformed document planned: %s", bad.JSON())
	}
}

func TestPlanIndexOutOfRange(t *testing.T) {
	r := plan(t, []byte(planDoc), nil)
	n, c := len(r.PlanEntries()), len(r.CommunicationRecords())
	for _, i := range []int{n, n + 100, -1} {
		_, err := r.PlanEntry(i)
		e := wantCode(t, err, CodeOutOfRange)
		if !strings.Contains(e.Message, "plan entry index") {
			t.Fatalf("PlanEntry(%d): %q", i, e.Message)
		}
	}
	for _, i := range []int{c, c + 100, -1} {
		_, err := r.CommunicationRecord(i)
		e := wantCode(t, err, CodeOutOfRange)
		if !strings.Contains(e.Message, "communication record index") {
			t.Fatalf("CommunicationRecord(%d): %q", i, e.Message)
		}
	}
}

// A document that gives its own plan is checked, not planned.
func TestPlanOfADocumentWithAPlanChecksIt(t *testing.T) {
	b := buildTwin(t)
	must(t, b.DeclarePlan())
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	checked, err := d.Check(nil)
	must(t, err)
	defer checked.Close()
	planned, err := d.Plan(nil)
	must(t, err)
	defer planned.Close()
	if planned.JSON() != checked.JSON() || planned.Memory() != nil || len(planned.PlanEntries()) != 0 {
		t.Fatalf("planned\n%s\nchecked\n%s", planned.JSON(), checked.JSON())
	}
}

// The builder's model planned gives the same result as its JSON twin
// planned.
func TestBuilderPlanMatchesJSONTwin(t *testing.T) {
	d, err := buildTwin(t).Build(nil)
	must(t, err)
	defer d.Close()
	built, err := d.Plan(nil)
	must(t, err)
	defer built.Close()
	twin := plan(t, []byte(builderTwinJSON), nil)
	if !built.OK() || built.JSON() != twin.JSON() {
		t.Fatalf("builder plan\n%s\ndiffers from its JSON twin's\n%s", built.JSON(), twin.JSON())
	}
	want := []PlanEntry{{FQN: "lin", Provenance: "owned:model"}}
	if !reflect.DeepEqual(built.PlanEntries(), want) || built.Memory() == nil || built.Memory().Devices != 2 {
		t.Fatalf("builder plan: entries %+v, memory %+v", built.PlanEntries(), built.Memory())
	}
}

func TestPlanClosedHandles(t *testing.T) {
	d, err := Parse([]byte(planDoc), nil)
	must(t, err)
	r, err := d.Plan(nil)
	must(t, err)
	d.Close()
	_, err = d.Plan(nil)
	wantClosed(t, err)

	// The copied values stay after Close; the library handle is gone.
	mem, entries, comm := r.Memory(), r.PlanEntries(), r.CommunicationRecords()
	r.Close()
	if !reflect.DeepEqual(r.Memory(), mem) || !reflect.DeepEqual(r.PlanEntries(), entries) ||
		!reflect.DeepEqual(r.CommunicationRecords(), comm) || mem == nil || len(entries) != 3 {
		t.Fatal("copied planning values changed after Close")
	}
	_, err = r.PlanEntry(0)
	wantClosed(t, err)
	_, err = r.CommunicationRecord(0)
	wantClosed(t, err)
}

func TestPlanThreadsAndConcurrency(t *testing.T) {
	d, err := Parse([]byte(planDoc), nil)
	must(t, err)
	defer d.Close()
	r0, err := d.Plan(nil)
	must(t, err)
	want := r0.JSON()
	r0.Close()
	for _, threads := range []uint32{1, 2, 64} {
		r, err := d.Plan(&CheckOptions{Threads: threads})
		must(t, err)
		if r.JSON() != want {
			t.Fatalf("plan differs with %d threads", threads)
		}
		r.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(threads uint32) {
			defer wg.Done()
			r, err := d.Plan(&CheckOptions{Threads: threads})
			if err != nil {
				errs <- err.Error()
				return
			}
			defer r.Close()
			if r.JSON() != want || len(r.PlanEntries()) != 3 {
				errs <- "plan differs when planned concurrently"
			}
		}(uint32(i % 3))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

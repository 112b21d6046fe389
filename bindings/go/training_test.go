package shardplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Training memory (Result.Training, since 0.9) against the result JSON's
// memory.training, and the builder's training section (SetTraining).

// exceedsDoc is a dp=2 x tp=4 mesh, zero 0 with a float32 master copy and
// selective recompute: 423,624,704 bytes on every device, over its 384 MiB
// of device_memory.
const exceedsDoc = "exceeds-device-memory.fail.json"

// trainingJSON is a result JSON's memory.training; the worst device's
// coordinates are read in order by orderedCoordinates.
type trainingJSON struct {
	Worst struct {
		Device      uint64          `json:"device"`
		Coordinates json.RawMessage `json:"coordinates"`
		Params      uint64          `json:"params"`
		Grads       uint64          `json:"grads"`
		Master      uint64          `json:"master"`
		Optimizer   uint64          `json:"optimizer"`
		Gathered    uint64          `json:"gathered"`
		Activations uint64          `json:"activations"`
		Total       uint64          `json:"total"`
	} `json:"worst"`
	MaxTotalBytes       uint64   `json:"max_total_bytes"`
	MinTotalBytes       uint64   `json:"min_total_bytes"`
	MeanTotalBytes      float64  `json:"mean_total_bytes"`
	PerDeviceTotalBytes []uint64 `json:"per_device_total_bytes"` // nil for null
}

// orderedCoordinates reads {"axis": c, ...} keeping the key order.
func orderedCoordinates(t *testing.T, raw json.RawMessage) ([]string, []uint64) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var axes []string
	var values []uint64
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("coordinates %s: %v %v", raw, tok, err)
	}
	for dec.More() {
		key, err := dec.Token()
		must(t, err)
		var v uint64
		must(t, dec.Decode(&v))
		axes = append(axes, key.(string))
		values = append(values, v)
	}
	return axes, values
}

// trainingAgreesWithJSON checks every field of r.Training() against the
// result JSON, and that the coordinates are keyed by axes, in mesh order.
func trainingAgreesWithJSON(t *testing.T, r *Result, axes []string) *Training {
	t.Helper()
	var got struct {
		Memory *struct {
			Training *trainingJSON `json:"training"`
		} `json:"memory"`
	}
	must(t, json.Unmarshal([]byte(r.JSON()), &got))
	tr := r.Training()
	if tr == nil || got.Memory == nil || got.Memory.Training == nil {
		t.Fatalf("Training() = %+v, JSON: %s", tr, r.JSON())
	}
	jt := got.Memory.Training
	jaxes, coordinates := orderedCoordinates(t, jt.Worst.Coordinates)
	if !reflect.DeepEqual(jaxes, axes) || !reflect.DeepEqual(tr.WorstCoordinates, coordinates) {
		t.Fatalf("coordinates: JSON %v %v, accessor %v", jaxes, coordinates, tr.WorstCoordinates)
	}
	w := jt.Worst
	want := Training{
		WorstDevice: w.Device, WorstCoordinates: coordinates,
		Params: w.Params, Grads: w.Grads, Master: w.Master, Optimizer: w.Optimizer,
		Gathered: w.Gathered, Activations: w.Activations, Total: w.Total,
		MaxTotalBytes: jt.MaxTotalBytes, MinTotalBytes: jt.MinTotalBytes,
		MeanTotalBytes: jt.MeanTotalBytes, PerDeviceTotalBytes: jt.PerDeviceTotalBytes,
	}
	if !reflect.DeepEqual(*tr, want) {
		t.Fatalf("Training() = %+v\nJSON says    %+v", *tr, want)
	}
	return tr
}

func TestTrainingEqualsTheResultJSON(t *testing.T) {
	r := plan(t, readFile(t, filepath.Join(goldenDir, exceedsDoc)), nil)
	ds := r.Diagnostics()
	if r.OK() || len(ds) != 1 || ds[0].Code != "exceeds-device-memory" ||
		ds[0].Pointer == nil || *ds[0].Pointer != "/training/device_memory" {
		t.Fatalf("OK %v, diagnostics %v", r.OK(), ds)
	}
	tr := trainingAgreesWithJSON(t, r, []string{"dp", "tp"})
	if tr.WorstDevice != 0 || !reflect.DeepEqual(tr.WorstCoordinates, []uint64{0, 0}) ||
		tr.Total != 423624704 || tr.Total <= 384<<20 ||
		tr.Total != tr.Params+tr.Grads+tr.Master+tr.Optimizer+tr.Gathered+tr.Activations ||
		len(tr.PerDeviceTotalBytes) != 8 || tr.PerDeviceTotalBytes[tr.WorstDevice] != tr.MaxTotalBytes {
		t.Fatalf("Training() = %+v", *tr)
	}
	// Training returns a copy.
	tr.WorstCoordinates[0], tr.PerDeviceTotalBytes[0] = 7, 1
	if again := r.Training(); again.WorstCoordinates[0] != 0 || again.PerDeviceTotalBytes[0] != 423624704 {
		t.Fatal("Training() shares its slices")
	}

	pass := plan(t, readFile(t, filepath.Join(goldenDir, "exceeds-device-memory.pass.json")), nil)
	if !pass.OK() {
		t.Fatalf("the pass twin: %v", pass.Diagnostics())
	}
	if tr := trainingAgreesWithJSON(t, pass, []string{"dp", "tp"}); tr.MaxTotalBytes > 512<<20 {
		t.Fatalf("the pass twin does not fit: %+v", *tr)
	}
}

func TestNoTrainingWithoutASectionOrAPlan(t *testing.T) {
	// Planned, with memory, but no training section.
	r := plan(t, []byte(planDoc), nil)
	if r.Memory() == nil || r.Training() != nil || strings.Contains(r.JSON(), `"training"`) {
		t.Fatalf("Memory %+v, Training %+v", r.Memory(), r.Training())
	}
	// A training section, but no plan made: checked, or not a valid document.
	text := readFile(t, filepath.Join(goldenDir, exceedsDoc))
	if c := check(t, text); c.Training() != nil {
		t.Fatalf("checked: Training %+v", c.Training())
	}
	if bad := plan(t, []byte(`{"schema": "shardplan.v1", "training": `), nil); bad.Training() != nil {
		t.Fatalf("malformed: Training %+v", bad.Training())
	}
}

// PerDeviceTotalBytes lists up to 65,536 devices; past 2^24 there is no
// training memory.
func TestTrainingOnLargeMeshes(t *testing.T) {
	text := string(readFile(t, filepath.Join(goldenDir, exceedsDoc)))
	if !strings.Contains(text, `"dp": 2,`) {
		t.Fatal(`the golden document has no "dp": 2,`)
	}
	for _, dp := range []int{16384, 16385, 1<<22 + 1} {
		doc := strings.Replace(text, `"dp": 2,`, fmt.Sprintf(`"dp": %d,`, dp), 1)
		r := plan(t, []byte(doc), nil)
		devices := dp * 4
		if devices > 1<<24 {
			if r.Training() != nil {
				t.Fatalf("dp=%d: Training %+v", dp, r.Training())
			}
			continue
		}
		tr := trainingAgreesWithJSON(t, r, []string{"dp", "tp"})
		if tr.MaxTotalBytes != 423624704 {
			t.Fatalf("dp=%d: max %d", dp, tr.MaxTotalBytes)
		}
		if listed := tr.PerDeviceTotalBytes != nil; listed != (devices <= 65536) {
			t.Fatalf("dp=%d: %d devices, %d listed", dp, devices, len(tr.PerDeviceTotalBytes))
		}
	}
}

func TestTrainingClosedResult(t *testing.T) {
	d, err := Parse(readFile(t, filepath.Join(goldenDir, exceedsDoc)), nil)
	must(t, err)
	defer d.Close()
	r, err := d.Plan(nil)
	must(t, err)
	tr := r.Training()
	r.Close()
	if !reflect.DeepEqual(r.Training(), tr) || tr == nil {
		t.Fatal("the copied training memory changed after Close")
	}
}

func TestBuilderSetTraining(t *testing.T) {
	b, err := NewBuilder()
	must(t, err)
	defer b.Close()
	must(t, b.AddAxis("dp", 4))
	must(t, b.AddModule("root", "Model"))
	must(t, b.SetRoot("root"))
	// Refused at the call, leaving nothing.
	e := wantCode(t, b.SetTrainingMap(map[string]any{"zero": 4}), CodeInvalidArgument)
	if e.Message != "'zero' must be an integer from 0 to 3 (at /training/zero)" {
		t.Fatalf("message %q", e.Message)
	}
	e = wantCode(t, b.SetTraining("[]"), CodeInvalidArgument)
	if e.Message != "expected an object, got an array (at /training)" {
		t.Fatalf("message %q", e.Message)
	}
	if err := b.SetTrainingMap(map[string]any{"headroom": make(chan int)}); err == nil {
		t.Fatal("SetTrainingMap encoded a channel")
	}
	text, err := b.JSON()
	must(t, err)
	if strings.Contains(text, `"training"`) {
		t.Fatalf("a refused section changed the document: %s", text)
	}
	// Once.
	must(t, b.SetTraining(`{"zero": 3, "shard_axes": ["dp"]}`))
	e = wantCode(t, b.SetTraining("{}"), CodeInvalidArgument)
	if e.Message != "the document already has a training section" {
		t.Fatalf("message %q", e.Message)
	}
	text, err = b.JSON()
	must(t, err)
	var doc struct {
		Training struct {
			Zero      int      `json:"zero"`
			ShardAxes []string `json:"shard_axes"`
		} `json:"training"`
	}
	must(t, json.Unmarshal([]byte(text), &doc))
	if doc.Training.Zero != 3 || !reflect.DeepEqual(doc.Training.ShardAxes, []string{"dp"}) {
		t.Fatalf("training in JSON: %s", text)
	}
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	r, err := d.Check(nil)
	must(t, err)
	defer r.Close()
	if !r.OK() {
		t.Fatalf("built: %v", r.Diagnostics())
	}

	// What depends on the mesh is checked by Build, as the parser checks it.
	other, err := NewBuilder()
	must(t, err)
	defer other.Close()
	must(t, other.AddModule("root", ""))
	must(t, other.SetRoot("root"))
	must(t, other.SetTrainingMap(map[string]any{"shard_axes": []string{"dp"}}))
	od, err := other.Build(nil)
	must(t, err)
	defer od.Close()
	checked, err := od.Check(nil)
	must(t, err)
	defer checked.Close()
	if ds := checked.Diagnostics(); len(ds) == 0 || ds[0].Code != "invalid-document" ||
		!strings.Contains(ds[0].Message, "shard axis 'dp' is not a mesh axis") {
		t.Fatalf("diagnostics %v", ds)
	}

	b.Close()
	wantClosed(t, b.SetTraining("{}"))
}

// The builder's model with a training section plans like its JSON twin.
func TestBuilderTrainingPlansAsItsJSONTwin(t *testing.T) {
	section := `{"zero": 1, "master_dtype": "float32", "device_memory": 64}`
	b := buildTwin(t)
	must(t, b.SetTraining(section))
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	built, err := d.Plan(nil)
	must(t, err)
	defer built.Close()
	twinJSON := strings.TrimSuffix(strings.TrimSpace(builderTwinJSON), "}") + `, "training": ` + section + "}"
	twin := plan(t, []byte(twinJSON), nil)
	if built.JSON() != twin.JSON() || !reflect.DeepEqual(built.Training(), twin.Training()) {
		t.Fatalf("builder plan\n%s\ndiffers from its JSON twin's\n%s", built.JSON(), twin.JSON())
	}
	trainingAgreesWithJSON(t, built, []string{"tp"})
}

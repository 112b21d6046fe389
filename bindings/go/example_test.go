package shardplan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	shardplan "github.com/shardplan/shardplan/bindings/go"
)

// Check a document and print its diagnostics, with the help and the fix
// (RFC 6902 JSON Patch operations) of those the engine knows how to fix
// (the README's example).
func Example() {
	data, err := os.ReadFile("../../examples/tiny-llama-broken.json")
	if err != nil {
		log.Fatal(err)
	}
	doc, err := shardplan.Parse(data, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Check(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	fmt.Println("ok:", res.OK())
	for _, d := range res.Diagnostics() {
		fmt.Println(d)
		if d.Help != nil {
			fmt.Println("  help:", *d.Help)
		}
		for _, op := range d.Fix {
			fmt.Println("  fix:", op)
		}
	}
	// Output:
	// ok: false
	// error[native-no-match]: native binding pattern 'layer.*.mlp' matched no module (at "/providers/native/0/match/0")
	//   help: did you mean 'layers.*.mlp'?
	// error[ports-mismatch]: module-owned in_src and in_dst must declare the same input names (at "/modules/layers.0.self_attn/family/sharding/in_dst")
	// error[unknown-axis]: module layouts cannot declare storage/unknown axis 'pp' (at "/modules/layers.1.self_attn/family/sharding/params/o_proj.weight/pp")
	//   help: did you mean 'dp'? (the mesh's axes are 'dp', 'tp')
	//   fix: {"op":"move","from":"/modules/layers.1.self_attn/family/sharding/params/o_proj.weight/pp","path":"/modules/layers.1.self_attn/family/sharding/params/o_proj.weight/dp"}
	// error[shared-conflict]: shared parameter 'lm_head.weight' has conflicting layouts (at "/providers/sharding/lm_head/params/weight")
	//   help: its first claimant 'embed_tokens.weight' places it dp=R, tp=S(0), this layout dp=R, tp=S(1); declare the same placements in both
	//   fix: {"op":"replace","path":"/providers/sharding/lm_head/params/weight","value":{"dp":"R","tp":"S(0)"}}
}

// Group the diagnostics by cause: one over-wide native pattern
// ('layers.*.mlp.experts.*' also matches the experts' own Linear modules)
// gives one diagnostic per module it should not have matched.
func ExampleResult_Groups() {
	data, err := os.ReadFile("../../tests/golden/cases/overlapping-communication.glob.fail.json")
	if err != nil {
		log.Fatal(err)
	}
	doc, err := shardplan.Parse(data, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Check(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	fmt.Println(res.Len(), "diagnostics in", len(res.Groups()), "groups")
	for _, g := range res.Groups()[:3] {
		fmt.Println(g, g.Listed)
	}
	first := res.Diagnostics()[res.Groups()[0].Listed[0]]
	patch, err := json.Marshal(first.Fix) // a JSON Patch document
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fix:", string(patch))
	// Output:
	// 42 diagnostics in 9 groups
	// error[overlapping-communication] x6 (at "/providers/native/0/parallel") [0 1 2 3 4 5]
	// error[unknown-forward-input] x6 (at "/providers/native/0/sharding/in_src/x") [6 7 8 9 10 11]
	// error[nested-duplicate] x2 (at "/providers/native/0/sharding/params/gate_proj.weight") [12 27]
	// fix: [{"op":"replace","path":"/providers/native/0/match","value":["layers.*.mlp.experts.[0-9]"]}]
}

// Build a one-layer model with a Builder and check it.
func ExampleBuilder() {
	b, err := shardplan.NewBuilder()
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	l, err := shardplan.NewLayout()
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	for _, step := range []error{
		b.AddAxis("tp", 2),
		b.AddParameter("w", []int64{4, 4}, ""),
		b.AddModule("root", ""),
		b.AddModule("lin", "Linear"),
		b.AddChild("root", "lin", "lin"),
		b.AddForwardArg("lin", "x"),
		b.AddModuleParam("lin", "weight", "w"),
		b.SetRoot("root"),
		l.SetPlacement(shardplan.PortParams, "weight", "tp", "S(0)"),
		l.AddEntry(shardplan.PortInSrc, "x"),
		l.AddEntry(shardplan.PortInDst, "x"),
		b.AddProvider("lin", l),
	} {
		if step != nil {
			log.Fatal(step)
		}
	}
	doc, err := b.Build(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Check(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	fmt.Println(res.OK(), len(res.Diagnostics()))
	fmt.Println(res.JSON())
	// Output:
	// true 0
	// {"schema":"shardplan.result.v1","diagnostics":[],"ok":true,"groups":[],"counts":{},"owned":{"specs":{"lin":{"params":{"weight":{"tp":"S(0)"}},"in_src":{"x":{}},"in_dst":{"x":{}}}},"parallel":{},"owned_names":["lin.weight"],"expected":["w"],"required":{"lin":["w"]},"aliases":[]}}
}

// Library misuse is a *Error with the sp_error code and message.
func ExampleError() {
	l, err := shardplan.NewLayout()
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	err = l.SetPlacement(shardplan.PortParams, "weight", "tp", "Shard(0)")
	var e *shardplan.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Message)
	}
	// Output:
	// INVALID_ARGUMENT bad placement 'Shard(0)' (expected S(dim), R, P or P(sum|avg|max|min|prod))
}

// Plan a model (one module-owned layout, a tp template for the rest) and
// read the plan, the memory per device and the communication it implies.
func ExampleDocument_Plan() {
	doc, err := shardplan.Parse([]byte(`{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
	  "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
	  "root": "model",
	  "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
	              "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
	              "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
	              "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
	  "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
	  "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}`), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Plan(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	fmt.Println("ok:", res.OK())
	for _, e := range res.PlanEntries() {
		fmt.Printf("plan %s: %s\n", e.FQN, e.Provenance)
	}
	m := res.Memory()
	fmt.Printf("memory: %d devices, %d bytes unsharded, max %d on device %d, per device %v\n",
		m.Devices, m.UnshardedBytes, m.MaxBytes, m.MaxDevice, m.PerDeviceBytes)
	for _, c := range res.CommunicationRecords() {
		fmt.Printf("%s %s %s: %s -> %s %s\n", c.FQN, c.Port, c.Axis, c.From, c.To, c.Collective)
	}
	// Output:
	// ok: true
	// plan embed: owned:model
	// plan up_proj: template:tp:up_proj
	// plan down_proj: template:tp:down_proj
	// memory: 8 devices, 3072 bytes unsharded, max 768 on device 0, per device [768 768 768 768 768 768 768 768]
	// down_proj out:output tp: P -> R all_reduce
}

// Plan a document with a training section and read the training memory of
// its worst device, the totals over devices and the verdict; a builder
// refuses an invalid training section.
func ExampleResult_Training() {
	data, err := os.ReadFile("../../tests/golden/cases/exceeds-device-memory.fail.json")
	if err != nil {
		log.Fatal(err)
	}
	doc, err := shardplan.Parse(data, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Plan(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	t := res.Training() // nil without a training section
	fmt.Printf("worst device %d at %v: params %d, grads %d, master %d, optimizer %d, gathered %d, activations %d, total %d\n",
		t.WorstDevice, t.WorstCoordinates, t.Params, t.Grads, t.Master, t.Optimizer, t.Gathered, t.Activations, t.Total)
	fmt.Printf("totals: max %d, min %d, mean %.0f, per device %v\n",
		t.MaxTotalBytes, t.MinTotalBytes, t.MeanTotalBytes, t.PerDeviceTotalBytes)
	fmt.Println(res.Diagnostics()[0].Code)
	b, err := shardplan.NewBuilder()
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	fmt.Println(b.SetTrainingMap(map[string]any{"zero": 4}))
	// Output:
	// worst device 0 at [0 0]: params 9437184, grads 9437184, master 18874368, optimizer 37748736, gathered 0, activations 348127232, total 423624704
	// totals: max 423624704, min 423624704, mean 423624704, per device [423624704 423624704 423624704 423624704 423624704 423624704 423624704 423624704]
	// exceeds-device-memory
	// shardplan: INVALID_ARGUMENT: 'zero' must be an integer from 0 to 3 (at /training/zero)
}

package shardplan

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Help, fixes and diagnostic groups (since 0.7) on golden cases read at run
// time: every value against what `shardplan check --format json` prints for
// the same document (the expected values below were taken from it) and
// against the result's own JSON, which is those bytes.

const goldenDir = "../../tests/golden/cases"

func checkGolden(t *testing.T, name string) *Result {
	t.Helper()
	return check(t, readFile(t, filepath.Join(goldenDir, name)))
}

func str(s string) *string { return &s }

func fixMove(from, path string) FixOperation {
	return FixOperation{Op: "move", Path: path, From: str(from)}
}

func fixReplace(path, value string) FixOperation {
	return FixOperation{Op: "replace", Path: path, Value: str(value)}
}

func errorGroup(code, pointer string, listed ...int) DiagnosticGroup {
	return DiagnosticGroup{Code: code, Severity: SeverityError, Pointer: str(pointer), Count: len(listed), Listed: listed}
}

// helpJSON is the part of a result's JSON that help, fix and groups give.
type helpJSON struct {
	Diagnostics []struct {
		Code    string          `json:"code"`
		Pointer *string         `json:"pointer"`
		Help    *string         `json:"help"`
		Fix     json.RawMessage `json:"fix"`
	} `json:"diagnostics"`
	Groups []struct {
		Code     string  `json:"code"`
		Severity string  `json:"severity"`
		Pointer  *string `json:"pointer"`
		Count    int     `json:"count"`
		Listed   []int   `json:"listed"`
	} `json:"groups"`
}

// agreesWithJSON checks every diagnostic's Help and Fix, and every group,
// against the result JSON: each fix operation prints as the bytes of its
// JSON object there, and json.Marshal(d.Fix) is the JSON's "fix".
func agreesWithJSON(t *testing.T, r *Result) {
	t.Helper()
	text := r.JSON()
	var got helpJSON
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	diags := r.Diagnostics()
	if len(diags) != len(got.Diagnostics) {
		t.Fatalf("%d diagnostics, %d in JSON", len(diags), len(got.Diagnostics))
	}
	for i, d := range diags {
		want := got.Diagnostics[i]
		if !reflect.DeepEqual(d.Help, want.Help) {
			t.Fatalf("diagnostic %d (%s): Help %v, JSON %v", i, d, d.Help, want.Help)
		}
		if len(d.Fix) == 0 {
			if want.Fix != nil || d.Fix != nil {
				t.Fatalf("diagnostic %d (%s): Fix %v, JSON %s", i, d, d.Fix, want.Fix)
			}
			continue
		}
		patch, err := json.Marshal(d.Fix)
		if err != nil || string(patch) != string(want.Fix) {
			t.Fatalf("diagnostic %d: json.Marshal(Fix) = %s, %v; JSON %s", i, patch, err, want.Fix)
		}
		for _, op := range d.Fix {
			if !strings.Contains(text, op.String()) {
				t.Fatalf("%s not in the result JSON", op)
			}
		}
	}
	groups := r.Groups()
	if len(groups) != len(got.Groups) {
		t.Fatalf("%d groups, %d in JSON", len(groups), len(got.Groups))
	}
	seen := make([]int, len(diags))
	for i, g := range groups {
		want := got.Groups[i]
		if g.Code != want.Code || g.Severity.String() != want.Severity || !reflect.DeepEqual(g.Pointer, want.Pointer) ||
			g.Count != want.Count || !reflect.DeepEqual(g.Listed, want.Listed) {
			t.Fatalf("group %d = %+v, JSON %+v", i, g, want)
		}
		if len(g.Listed) != g.Count {
			t.Fatalf("group %d lists %d of %d", i, len(g.Listed), g.Count)
		}
		for _, k := range g.Listed {
			seen[k]++
			if diags[k].Code != g.Code || !reflect.DeepEqual(diags[k].Pointer, g.Pointer) {
				t.Fatalf("diagnostic %d (%s) in group %s", k, diags[k], g)
			}
		}
		again, err := r.Group(i)
		if err != nil || !reflect.DeepEqual(again, g) {
			t.Fatalf("Group(%d) = %+v, %v; want %+v", i, again, err, g)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("diagnostic %d is in %d groups", k, n)
		}
	}
}

func TestHelpAndFixOfATypo(t *testing.T) {
	for _, tc := range []struct {
		file, code, help string
		fix              []FixOperation
		text             string // the fix's String()
	}{
		{"unknown-axis.typo.fail.json", "unknown-axis", "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')",
			[]FixOperation{fixMove("/providers/sharding/proj/params/weight/pd", "/providers/sharding/proj/params/weight/dp")},
			`{"op":"move","from":"/providers/sharding/proj/params/weight/pd","path":"/providers/sharding/proj/params/weight/dp"}`},
		// The value is JSON text: the string "tp" with its quotes.
		{"parallel-unknown-axis.typo.fail.json", "parallel-unknown-axis", "did you mean 'tp'? (the mesh's axes are 'tp')",
			[]FixOperation{fixReplace("/modules/linear/parallel/axes/0", `"tp"`)},
			`{"op":"replace","path":"/modules/linear/parallel/axes/0","value":"tp"}`},
		{"unknown-module.typo.fail.json", "unknown-module", "did you mean 'proj'?",
			[]FixOperation{fixMove("/providers/sharding/porj", "/providers/sharding/proj")},
			`{"op":"move","from":"/providers/sharding/porj","path":"/providers/sharding/proj"}`},
		{"unknown-parameter.typo.fail.json", "unknown-parameter", "did you mean 'proj.weight'?",
			[]FixOperation{fixMove("/providers/sharding/proj/params/weigth", "/providers/sharding/proj/params/weight")},
			`{"op":"move","from":"/providers/sharding/proj/params/weigth","path":"/providers/sharding/proj/params/weight"}`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := checkGolden(t, tc.file)
			d := r.Diagnostics()[0]
			if d.Code != tc.code || d.Help == nil || *d.Help != tc.help {
				t.Fatalf("diagnostic %s, help %v; want %s, %q", d, d.Help, tc.code, tc.help)
			}
			if !reflect.DeepEqual(d.Fix, tc.fix) {
				t.Fatalf("Fix = %+v, want %+v", d.Fix, tc.fix)
			}
			if got := d.Fix[0].String(); got != tc.text {
				t.Fatalf("Fix[0].String() = %s, want %s", got, tc.text)
			}
			again, err := r.Diagnostic(0)
			if err != nil || !reflect.DeepEqual(again, d) {
				t.Fatalf("Diagnostic(0) = %+v, %v; want %+v", again, err, d)
			}
			// String stays one line, without help or fix.
			if s := d.String(); strings.Contains(s, "did you mean") || strings.Contains(s, "\n") {
				t.Fatalf("String() = %q", s)
			}
			agreesWithJSON(t, r)
		})
	}
}

func TestTypoGroups(t *testing.T) {
	r := checkGolden(t, "unknown-axis.typo.fail.json")
	want := []DiagnosticGroup{errorGroup("unknown-axis", "/providers/sharding/proj/params/weight/pd", 0)}
	if got := r.Groups(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Groups() = %+v, want %+v", got, want)
	}
	// Two causes, two groups; the second diagnostic has no help and no fix.
	r = checkGolden(t, "unknown-parameter.typo.fail.json")
	diags := r.Diagnostics()
	if len(diags) != 2 || diags[1].Code != "omitted-parameters" || diags[1].Help != nil || diags[1].Fix != nil {
		t.Fatalf("diagnostics %+v", diags)
	}
	want = []DiagnosticGroup{
		errorGroup("unknown-parameter", "/providers/sharding/proj/params/weigth", 0),
		errorGroup("omitted-parameters", "/providers/sharding/proj/params", 1),
	}
	if got := r.Groups(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Groups() = %+v, want %+v", got, want)
	}
	agreesWithJSON(t, r)
}

func TestGroupsOfAnOverWideGlob(t *testing.T) {
	r := checkGolden(t, "overlapping-communication.glob.fail.json")
	if r.Len() != 42 {
		t.Fatalf("%d diagnostics, want 42", r.Len())
	}
	groups := r.Groups()
	var counts []int
	for _, g := range groups {
		counts = append(counts, g.Count)
	}
	if want := []int{6, 6, 2, 2, 2, 6, 6, 6, 6}; !reflect.DeepEqual(counts, want) {
		t.Fatalf("group counts %v, want %v", counts, want)
	}
	for i, want := range map[int]DiagnosticGroup{
		0: errorGroup("overlapping-communication", "/providers/native/0/parallel", 0, 1, 2, 3, 4, 5),
		1: errorGroup("unknown-forward-input", "/providers/native/0/sharding/in_src/x", 6, 7, 8, 9, 10, 11),
		// Not adjacent: the same cause found again for the second expert.
		2: errorGroup("nested-duplicate", "/providers/native/0/sharding/params/gate_proj.weight", 12, 27),
		8: errorGroup("omitted-parameters", "/providers/native/0/sharding/params", 18, 22, 26, 33, 37, 41),
	} {
		if !reflect.DeepEqual(groups[i], want) {
			t.Fatalf("group %d = %+v, want %+v", i, groups[i], want)
		}
	}
	if s := groups[0].String(); s != `error[overlapping-communication] x6 (at "/providers/native/0/parallel")` {
		t.Fatalf("String() = %s", s)
	}
	// The group's diagnostics share one help and one fix: narrow the glob.
	diags := r.Diagnostics()
	help := "'layers.*.mlp.experts.*' also matches the modules nested in those it matches " +
		"(fnmatch's '*' crosses dots); \"match\": ['layers.*.mlp.experts.[0-9]'] matches only the outer ones"
	fix := []FixOperation{fixReplace("/providers/native/0/match", `["layers.*.mlp.experts.[0-9]"]`)}
	for _, k := range groups[0].Listed {
		if d := diags[k]; d.Help == nil || *d.Help != help || !reflect.DeepEqual(d.Fix, fix) {
			t.Fatalf("diagnostic %d: help %v, fix %+v", k, d.Help, d.Fix)
		}
	}
	agreesWithJSON(t, r)

	// The copies are the caller's.
	groups[0].Listed[0] = 99
	diags[0].Fix[0].Op = "remove"
	if r.Groups()[0].Listed[0] != 0 || r.Diagnostics()[0].Fix[0].Op != "replace" {
		t.Fatal("modifying a returned copy changed the result")
	}
}

func TestGroupsOfOKAndMalformedDocuments(t *testing.T) {
	r := check(t, []byte(`{"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "m", "modules": {"m": {}}}`))
	if !r.OK() || r.Groups() != nil {
		t.Fatalf("OK %v, Groups %+v", r.OK(), r.Groups())
	}
	r = check(t, []byte("{not json"))
	groups := r.Groups()
	if len(groups) != 1 || groups[0].Code != "invalid-document" || groups[0].Count != 1 || !reflect.DeepEqual(groups[0].Listed, []int{0}) {
		t.Fatalf("Groups() = %+v", groups)
	}
	agreesWithJSON(t, r)
}

func TestPlannedResultHasHelpFixAndGroups(t *testing.T) {
	r := plan(t, readFile(t, filepath.Join(goldenDir, "unknown-axis.typo.fail.json")), nil)
	if r.OK() || len(r.Groups()) == 0 || r.Diagnostics()[0].Help == nil {
		t.Fatalf("OK %v, groups %+v, diagnostics %+v", r.OK(), r.Groups(), r.Diagnostics())
	}
	agreesWithJSON(t, r)
}

func TestGroupIndexOutOfRangeAndClosed(t *testing.T) {
	r := checkGolden(t, "unknown-axis.typo.fail.json")
	for _, i := range []int{1, 100, -1} {
		_, err := r.Group(i)
		wantCode(t, err, CodeOutOfRange)
	}
	groups, diags := r.Groups(), r.Diagnostics()
	r.Close()
	_, err := r.Group(0)
	wantClosed(t, err)
	// The copied values stay after Close.
	if !reflect.DeepEqual(r.Groups(), groups) || !reflect.DeepEqual(r.Diagnostics(), diags) || diags[0].Help == nil {
		t.Fatal("copied groups or diagnostics changed after Close")
	}
}

func TestFixOperationText(t *testing.T) {
	op := FixOperation{Op: "replace", Path: "/a\"b\\c\n\x01é", Value: str(`["x"]`)}
	want := `{"op":"replace","path":"/a\"b\\c\n\u0001é","value":["x"]}`
	if got := op.String(); got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
	var back map[string]interface{}
	if err := json.Unmarshal([]byte(op.String()), &back); err != nil || back["path"] != op.Path {
		t.Fatalf("%s does not read back: %v, %v", op, back, err)
	}
}

func TestHelpFixAndGroupsForEveryThreadCount(t *testing.T) {
	d, err := Parse(readFile(t, filepath.Join(goldenDir, "overlapping-communication.glob.fail.json")), nil)
	must(t, err)
	defer d.Close()
	ref, err := d.Check(&CheckOptions{Threads: 1})
	must(t, err)
	defer ref.Close()
	var wg sync.WaitGroup
	for _, threads := range []uint32{0, 2, 4} {
		wg.Add(1)
		go func(threads uint32) {
			defer wg.Done()
			r, err := d.Check(&CheckOptions{Threads: threads})
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			if !reflect.DeepEqual(r.Diagnostics(), ref.Diagnostics()) || !reflect.DeepEqual(r.Groups(), ref.Groups()) {
				t.Errorf("threads %d: another result", threads)
			}
		}(threads)
	}
	wg.Wait()
}

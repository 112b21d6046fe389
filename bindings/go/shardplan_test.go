package shardplan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The conformance cases live in the repository; they are read, not copied.
const conformanceDir = "../../tests/conformance"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// check parses and checks a document, closing both handles at the end of
// the test.
func check(t *testing.T, doc []byte) *Result {
	t.Helper()
	d, err := Parse(doc, nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	r, err := d.Check(nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// wantCode asserts that err is a *Error with the given code.
func wantCode(t *testing.T, err error, code ErrorCode) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want a *Error with code %v", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %v (%q), want %v", e.Code, e.Message, code)
	}
	if e.Message == "" {
		t.Fatalf("error with code %v has an empty message", code)
	}
	return e
}

func wantClosed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("got error %v, want one wrapping ErrClosed", err)
	}
}

func TestVersions(t *testing.T) {
	if got := ABIVersion(); got != ExpectedABIVersion {
		t.Fatalf("ABIVersion() = %d, want %d", got, ExpectedABIVersion)
	}
	if v := Version(); !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("Version() = %q, want MAJOR.MINOR.PATCH", v)
	}
	if err := ensureABI(); err != nil {
		t.Fatalf("ensureABI() = %v with the real library", err)
	}
}

func TestCheckABIRefusesMismatch(t *testing.T) {
	if err := checkABI(ExpectedABIVersion); err != nil {
		t.Fatalf("checkABI(%d) = %v, want nil", ExpectedABIVersion, err)
	}
	for _, fake := range []uint32{0, 2, 99} {
		err := checkABI(fake)
		if !errors.Is(err, ErrIncompatibleABI) {
			t.Fatalf("checkABI(%d) = %v, want ErrIncompatibleABI", fake, err)
		}
		msg := err.Error()
		want1 := "expects C ABI version 1"
		want2 := "has C ABI version " + map[uint32]string{0: "0", 2: "2", 99: "99"}[fake]
		if !strings.Contains(msg, want1) || !strings.Contains(msg, want2) {
			t.Fatalf("checkABI(%d) message %q does not name both versions", fake, msg)
		}
	}
}

// ---- Conformance ------------------------------------------------------------

type expectation struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Owned *struct {
		OwnedNames []string   `json:"owned_names"`
		Aliases    [][]string `json:"aliases"`
	} `json:"owned"`
}

type resultJSON struct {
	Schema      string            `json:"schema"`
	OK          bool              `json:"ok"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
	Owned       *struct {
		OwnedNames []string   `json:"owned_names"`
		Aliases    [][]string `json:"aliases"`
	} `json:"owned"`
}

func TestConformance(t *testing.T) {
	for _, name := range []string{"000-tiny-llama", "001-multiple-owners", "005-native-overlaps-family"} {
		t.Run(name, func(t *testing.T) {
			doc := readFile(t, filepath.Join(conformanceDir, "cases", name+".json"))
			var want expectation
			if err := json.Unmarshal(readFile(t, filepath.Join(conformanceDir, "expected", name+".json")), &want); err != nil {
				t.Fatal(err)
			}
			r := check(t, doc)
			var got resultJSON
			if err := json.Unmarshal([]byte(r.JSON()), &got); err != nil {
				t.Fatalf("result JSON: %v\n%s", err, r.JSON())
			}
			if got.Schema != "shardplan.result.v1" {
				t.Fatalf("schema %q", got.Schema)
			}
			if r.OK() != want.OK || got.OK != want.OK {
				t.Fatalf("OK() = %v, JSON ok = %v, want %v", r.OK(), got.OK, want.OK)
			}
			if want.OK {
				if n := len(r.Diagnostics()); n != 0 || r.Len() != 0 || len(got.Diagnostics) != 0 {
					t.Fatalf("valid case has %d diagnostics: %v", n, r.Diagnostics())
				}
				if got.Owned == nil || want.Owned == nil {
					t.Fatalf("missing owned section: got %v, want %v", got.Owned, want.Owned)
				}
				if !reflect.DeepEqual(got.Owned.OwnedNames, want.Owned.OwnedNames) {
					t.Fatalf("owned_names = %v, want %v", got.Owned.OwnedNames, want.Owned.OwnedNames)
				}
				if !reflect.DeepEqual(got.Owned.Aliases, want.Owned.Aliases) {
					t.Fatalf("aliases = %v, want %v", got.Owned.Aliases, want.Owned.Aliases)
				}
				return
			}
			diags := r.Diagnostics()
			if len(diags) == 0 || r.Len() != len(diags) || len(got.Diagnostics) != len(diags) {
				t.Fatalf("failing case: %d diagnostics, Len %d, %d in JSON", len(diags), r.Len(), len(got.Diagnostics))
			}
			first := diags[0]
			if first.Code != want.Error.Code || first.Message != want.Error.Message {
				t.Fatalf("first diagnostic %q: %q, want %q: %q", first.Code, first.Message, want.Error.Code, want.Error.Message)
			}
			if first.Severity != SeverityError {
				t.Fatalf("first diagnostic severity %v", first.Severity)
			}
			// Diagnostic(i) reads the same thing through the library.
			again, err := r.Diagnostic(0)
			if err != nil || !reflect.DeepEqual(again, first) {
				t.Fatalf("Diagnostic(0) = %+v, %v; want %+v", again, err, first)
			}
		})
	}
}

// ---- Documents and results --------------------------------------------------

func TestMalformedDocumentIsADiagnostic(t *testing.T) {
	for _, text := range []string{`{"schema": "shardplan.v1", `, ``, `[1, 2]`} {
		d, err := Parse([]byte(text), nil)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; a malformed document is not an error", text, err)
		}
		valid, err := d.IsValid()
		if err != nil || valid {
			t.Fatalf("IsValid(%q) = %v, %v; want false, nil", text, valid, err)
		}
		r, err := d.Check(nil)
		if err != nil {
			t.Fatal(err)
		}
		diags := r.Diagnostics()
		if r.OK() || len(diags) != 1 || diags[0].Code != "invalid-document" || diags[0].Severity != SeverityError {
			t.Fatalf("%q: OK %v, diagnostics %v; want one invalid-document", text, r.OK(), diags)
		}
		if diags[0].FQN != nil || diags[0].Parameter != nil {
			t.Fatalf("%q: invalid-document has fqn/parameter: %+v", text, diags[0])
		}
		if diags[0].Pointer == nil || *diags[0].Pointer != "" {
			t.Fatalf("%q: invalid-document pointer %v, want the whole document \"\"", text, diags[0].Pointer)
		}
		r.Close()
		d.Close()
	}
}

func TestOptionalFieldsOfDiagnostics(t *testing.T) {
	r := check(t, readFile(t, "../../examples/tiny-llama-broken.json"))
	diags := r.Diagnostics()
	if len(diags) != 4 {
		t.Fatalf("got %d diagnostics, want 4: %v", len(diags), diags)
	}
	// native-no-match: no fqn, no parameter, a pointer.
	if d := diags[0]; d.Code != "native-no-match" || d.FQN != nil || d.Parameter != nil ||
		d.Pointer == nil || *d.Pointer != "/providers/native/0/match/0" {
		t.Fatalf("diagnostic 0: %+v", d)
	}
	// unknown-axis in params: fqn, parameter and pointer.
	if d := diags[2]; d.Code != "unknown-axis" || d.FQN == nil || *d.FQN != "layers.1.self_attn" ||
		d.Parameter == nil || *d.Parameter != "layers.1.self_attn.o_proj.weight" {
		t.Fatalf("diagnostic 2: %+v", d)
	}
}

func TestParseOptions(t *testing.T) {
	doc := readFile(t, filepath.Join(conformanceDir, "cases", "000-tiny-llama.json"))
	for _, tc := range []struct {
		opts *ParseOptions
		ok   bool
	}{
		{nil, true},
		{&ParseOptions{}, true},
		{&ParseOptions{MaxPaths: 2}, false},
		{&ParseOptions{MaxFQNBytes: 10}, false},
		{&ParseOptions{MaxJSONDepth: 2}, false},
		{&ParseOptions{MaxPaths: 1000, MaxFQNBytes: 1 << 20, MaxJSONDepth: 64}, true},
	} {
		d, err := Parse(doc, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		valid, _ := d.IsValid()
		r, err := d.Check(nil)
		if err != nil {
			t.Fatal(err)
		}
		if valid != tc.ok || r.OK() != tc.ok {
			t.Fatalf("options %+v: valid %v, OK %v, want %v (%v)", tc.opts, valid, r.OK(), tc.ok, r.Diagnostics())
		}
		if !tc.ok && r.Diagnostics()[0].Code != "invalid-document" {
			t.Fatalf("options %+v: %v", tc.opts, r.Diagnostics())
		}
		r.Close()
		d.Close()
	}
}

func TestCheckThreadsAndConcurrency(t *testing.T) {
	d, err := Parse(readFile(t, "../../examples/tiny-llama-broken.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r0, err := d.Check(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := r0.JSON()
	r0.Close()
	for _, threads := range []uint32{0, 1, 2, 64} {
		r, err := d.Check(&CheckOptions{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON() != want {
			t.Fatalf("result differs with %d threads", threads)
		}
		r.Close()
	}
	// One document checked from several goroutines at once.
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(threads uint32) {
			defer wg.Done()
			r, err := d.Check(&CheckOptions{Threads: threads})
			if err != nil {
				errs <- err.Error()
				return
			}
			defer r.Close()
			if r.JSON() != want {
				errs <- "result differs when checked concurrently"
			}
		}(uint32(i % 3))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// ---- Errors -----------------------------------------------------------------

func TestErrorsCarryCodeAndMessage(t *testing.T) {
	l, err := NewLayout()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e := wantCode(t, l.SetPlacement(PortParams, "weight", "tp", "Shard(0)"), CodeInvalidArgument)
	if !strings.Contains(e.Message, "Shard(0)") || !strings.HasPrefix(e.Error(), "shardplan: INVALID_ARGUMENT: ") {
		t.Fatalf("error %q", e.Error())
	}
	if err := l.SetPlacement(PortParams, "weight", "tp", "S(0)"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, l.SetPlacement(PortParams, "weight", "tp", "R"), CodeInvalidArgument) // axis placed twice
	wantCode(t, l.Declare(Port(42)), CodeInvalidArgument)

	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.AddAxis("tp", 2); err != nil {
		t.Fatal(err)
	}
	wantCode(t, b.AddAxis("tp", 4), CodeInvalidArgument) // duplicate mesh axis
	wantCode(t, b.AddAxis("dp", 0), CodeInvalidArgument)
	wantCode(t, b.AddProvider("lin", nil), CodeNullArgument)
	wantCode(t, b.SetFamilyCached("lin", nil, nil), CodeNullArgument)

	r := check(t, readFile(t, filepath.Join(conformanceDir, "cases", "001-multiple-owners.json")))
	for _, i := range []int{r.Len(), r.Len() + 100, -1} {
		_, err := r.Diagnostic(i)
		wantCode(t, err, CodeOutOfRange)
	}
}

func TestClosedHandles(t *testing.T) {
	doc := readFile(t, filepath.Join(conformanceDir, "cases", "001-multiple-owners.json"))
	d, err := Parse(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Check(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // Close is idempotent
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = d.Check(nil)
	wantClosed(t, err)
	_, err = d.IsValid()
	wantClosed(t, err)

	// The result outlives its document; after its own Close the copied
	// values stay, the library handle is gone.
	first, err := r.Diagnostic(0)
	if err != nil {
		t.Fatal(err)
	}
	json, diags := r.JSON(), r.Diagnostics()
	r.Close()
	r.Close()
	if r.OK() || r.JSON() != json || !reflect.DeepEqual(r.Diagnostics(), diags) || !reflect.DeepEqual(diags[0], first) {
		t.Fatal("copied result values changed after Close")
	}
	_, err = r.Diagnostic(0)
	wantClosed(t, err)

	// JSON is made on first use: a result closed before has none.
	d2, err := Parse(doc, nil)
	must(t, err)
	defer d2.Close()
	r2, err := d2.Check(nil)
	must(t, err)
	r2.Close()
	if r2.JSON() != "" || r2.OK() || r2.Len() != len(diags) {
		t.Fatalf("closed result: JSON %q, OK %v, Len %d", r2.JSON(), r2.OK(), r2.Len())
	}

	l, err := NewLayout()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	l.Close()
	wantClosed(t, l.Declare(PortParams))
	wantClosed(t, l.AddEntry(PortInSrc, "x"))
	wantClosed(t, l.SetPlacement(PortParams, "w", "tp", "R"))
	wantClosed(t, l.SetOutNames([]string{"y"}))

	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	wantClosed(t, b.AddProvider("", l)) // a closed layout passed to an open builder
	b.Close()
	b.Close()
	wantClosed(t, b.AddAxis("tp", 2))
	wantClosed(t, b.SetRoot("root"))
	_, err = b.JSON()
	wantClosed(t, err)
	_, err = b.Build(nil)
	wantClosed(t, err)
}

func TestFinalizersFreeUnclosedHandles(t *testing.T) {
	doc := readFile(t, filepath.Join(conformanceDir, "cases", "000-tiny-llama.json"))
	for i := 0; i < 200; i++ {
		d, err := Parse(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Check(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Plan(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := NewLayout(); err != nil {
			t.Fatal(err)
		}
		if _, err := NewBuilder(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
}

// ---- Builder ----------------------------------------------------------------

// builderTwinJSON is the document the builder below makes, written by hand.
const builderTwinJSON = `{
  "schema": "shardplan.v1",
  "mesh": {"tp": 2},
  "parameters": {"w": {"shape": [4, 4]}},
  "root": "root",
  "modules": {
    "root": {"children": {"lin": "lin"}},
    "lin": {"forward": ["x"], "params": {"weight": "w"}}
  },
  "providers": {"sharding": {
    "lin": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}
  }}
}`

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func buildTwin(t *testing.T) *Builder {
	t.Helper()
	b, err := NewBuilder()
	must(t, err)
	t.Cleanup(func() { b.Close() })
	must(t, b.AddAxis("tp", 2))
	must(t, b.AddParameter("w", []int64{4, 4}, ""))
	must(t, b.AddModule("root", ""))
	must(t, b.AddModule("lin", ""))
	must(t, b.AddChild("root", "lin", "lin"))
	must(t, b.AddForwardArg("lin", "x"))
	must(t, b.AddModuleParam("lin", "weight", "w"))
	must(t, b.SetRoot("root"))
	l, err := NewLayout()
	must(t, err)
	defer l.Close() // the builder keeps its own copy
	must(t, l.SetPlacement(PortParams, "weight", "tp", "S(0)"))
	must(t, l.AddEntry(PortInSrc, "x"))
	must(t, l.AddEntry(PortInDst, "x"))
	must(t, b.AddProvider("lin", l))
	return b
}

func TestBuilderMatchesJSONTwin(t *testing.T) {
	b := buildTwin(t)
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	valid, err := d.IsValid()
	if err != nil || !valid {
		t.Fatalf("built document IsValid = %v, %v", valid, err)
	}
	built, err := d.Check(nil)
	must(t, err)
	defer built.Close()
	twin := check(t, []byte(builderTwinJSON))
	if !built.OK() || built.JSON() != twin.JSON() {
		t.Fatalf("builder result\n%s\ndiffers from its JSON twin's\n%s", built.JSON(), twin.JSON())
	}
	var got resultJSON
	must(t, json.Unmarshal([]byte(built.JSON()), &got))
	if got.Owned == nil || !reflect.DeepEqual(got.Owned.OwnedNames, []string{"lin.weight"}) {
		t.Fatalf("owned: %s", built.JSON())
	}
	// The builder's own JSON text parses to the same result too.
	text, err := b.JSON()
	must(t, err)
	if fromText := check(t, []byte(text)); fromText.JSON() != built.JSON() {
		t.Fatalf("result of builder JSON\n%s\ndiffers:\n%s", text, fromText.JSON())
	}
}

func TestBuilderEmptyPlanCoversNothing(t *testing.T) {
	b := buildTwin(t)
	must(t, b.DeclarePlan())
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	r, err := d.Check(nil)
	must(t, err)
	defer r.Close()
	if r.OK() || !strings.Contains(r.JSON(), `"code":"override-removed-coverage"`) {
		t.Fatalf("an empty plan must remove coverage: %s", r.JSON())
	}
}

func TestBuilderFullAPI(t *testing.T) {
	b := buildTwin(t)
	must(t, b.AddParameter("s", []int64{}, "bfloat16")) // a scalar
	must(t, b.AddParameter("u", nil, ""))               // an unknown shape
	must(t, b.AddModule("blk", "Block"))
	must(t, b.AddChild("root", "blk", "blk"))
	must(t, b.AddForwardArg("blk", "**kwargs"))
	must(t, b.AddModuleParam("blk", "scale", "s"))
	tp := &ParallelSpec{BindingKind: "tp", Axes: []string{"tp"}}
	must(t, b.SetModuleParallel("blk", tp))
	must(t, b.SetModuleParallel("blk", nil))
	must(t, b.SetModuleParallel("blk", tp))
	fam, err := NewLayout()
	must(t, err)
	defer fam.Close()
	must(t, fam.SetPlacement(PortParams, "scale", "tp", "R"))
	must(t, fam.Declare(PortInSrc))
	must(t, fam.Declare(PortInDst))
	must(t, fam.SetPlacement(PortOutSrc, "y", "tp", "P"))
	must(t, fam.SetPlacement(PortOutDst, "y", "tp", "R"))
	must(t, fam.SetOutNames([]string{"y"}))
	must(t, b.SetFamily("blk", true, fam))
	must(t, b.SetFamilyCached("blk", fam, tp))
	must(t, b.AddNative([]string{"nomatch.*"}, fam, nil))
	must(t, b.AddPlanEntry("lin", fam))
	text, err := b.JSON()
	must(t, err)
	var doc map[string]interface{}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("builder JSON: %v\n%s", err, text)
	}
	for _, key := range []string{`"s"`, `"bfloat16"`, `"**kwargs"`, `"nomatch.*"`, `"cached"`, `"out_names"`, `"plan"`} {
		if !strings.Contains(text, key) {
			t.Fatalf("builder JSON lacks %s:\n%s", key, text)
		}
	}
	d, err := b.Build(&ParseOptions{MaxJSONDepth: 64})
	must(t, err)
	defer d.Close()
	r, err := d.Check(&CheckOptions{Threads: 1})
	must(t, err)
	defer r.Close()
	if fromText := check(t, []byte(text)); fromText.JSON() != r.JSON() {
		t.Fatalf("built and parsed results differ:\n%s\n%s", r.JSON(), fromText.JSON())
	}
	// The native request matches nothing: a diagnostic whose pointer
	// refers to the builder's JSON.
	found := false
	for _, diag := range r.Diagnostics() {
		if diag.Code == "native-no-match" && diag.Pointer != nil && *diag.Pointer == "/providers/native/0/match/0" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no native-no-match diagnostic: %v", r.Diagnostics())
	}
}

func TestBuilderDanglingReference(t *testing.T) {
	b, err := NewBuilder()
	must(t, err)
	defer b.Close()
	must(t, b.AddAxis("tp", 2))
	must(t, b.AddModule("root", ""))
	must(t, b.AddChild("root", "lin", "missing"))
	must(t, b.SetRoot("root"))
	d, err := b.Build(nil)
	must(t, err)
	defer d.Close()
	r, err := d.Check(nil)
	must(t, err)
	defer r.Close()
	diags := r.Diagnostics()
	if len(diags) != 1 || diags[0].Code != "invalid-document" || diags[0].Pointer == nil {
		t.Fatalf("dangling child: %v", diags)
	}
	text, err := b.JSON()
	must(t, err)
	if !strings.Contains(text, `"missing"`) {
		t.Fatalf("builder JSON:\n%s", text)
	}
}

func TestStringers(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		CodeInvalidArgument: "INVALID_ARGUMENT", CodeOutOfRange: "OUT_OF_RANGE", ErrorCode(77): "ErrorCode(77)",
		SeverityError: "error", SeverityWarning: "warning", SeverityInfo: "info",
		PortParams: "params", PortInSrc: "in_src", PortInDst: "in_dst", PortOutSrc: "out_src", PortOutDst: "out_dst",
	} {
		if got := v.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", v, got, want)
		}
	}
}

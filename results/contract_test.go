package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// TestStoredDocumentsRoundTrip: stored result documents (schema 2, the
// render package's golden files) load with every field known and are
// written back as they were: the contract's types the document carries
// (samples, guest, outcome) keep the document's JSON.
func TestStoredDocumentsRoundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("render", "testdata", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no stored documents in render/testdata (%v)", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var r results.Result
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("load: %v", err)
			}
			if r.Schema > results.SchemaVersion || len(r.Samples) == 0 || r.Outcome.Status == "" {
				t.Fatalf("loaded %s: want a document of schema %d at most, with samples and an outcome", r.ID, results.SchemaVersion)
			}
			got, err := json.MarshalIndent(&r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			// Compared as JSON values: the opaque profile comes back as a
			// map, its keys sorted.
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &wantV); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotV, wantV) {
				t.Errorf("written back differs from the stored document:\n got %s\nwant %s", got, b)
			}
		})
	}
}

// TestClaimAndReferenceJSON: a claim and a reference embed the contract's
// types and add the host's fields, with the JSON names they always had.
func TestClaimAndReferenceJSON(t *testing.T) {
	max := 3.0
	c := results.Claim{Claim: contract.Claim{ID: "E1.6", Source: "s", Statement: "st", Machine: "m", Profile: "p", Rationale: "r",
		Scope: &contract.Scope{Params: map[string]string{"n": "1"}}, Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 2, Max: &max}},
		Plugin: "pl", Bench: "be"}.WithKind()
	ref := results.Reference{Reference: contract.Reference{Experiment: "E1", Source: "s", Machine: "m", Profile: "p", Metric: "x",
		Value: 1, Unit: "s", Labels: map[string]string{"k": "v"}, Note: "n"}, Bench: "be"}
	for _, tt := range []struct {
		v    any
		back any // a new value of v's type, to load into
		want []string
	}{
		{c, new(results.Claim), []string{"bench", "id", "kind", "machine", "plugin", "profile", "ratio", "rationale", "scope", "source", "statement"}},
		{ref, new(results.Reference), []string{"bench", "experiment", "labels", "machine", "metric", "note", "profile", "source", "unit", "value"}},
	} {
		b, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tt.want) {
			t.Errorf("%T as JSON has keys %v, want %v", tt.v, keys, tt.want)
		}
		if err := json.Unmarshal(b, tt.back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(tt.back)
		if !bytes.Equal(again, b) {
			t.Errorf("%T round trip: %s, want %s", tt.v, again, b)
		}
	}
	if c.Kind != contract.KindRatio {
		t.Errorf("WithKind: kind %q, want %q", c.Kind, contract.KindRatio)
	}
}

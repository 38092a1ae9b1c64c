package plugins

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestDescriptionJSONRoundTrip(t *testing.T) {
	d := testDescription()
	d.Experiments[0].References = []Reference{{Experiment: "E2", Source: "notes <&>", Machine: "m",
		Metric: "t", Value: 0.5, Unit: "s", Labels: map[string]string{"k": "v"}}}
	b, err := MarshalDescription(d)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MarshalDescription(d)
	if err != nil || !bytes.Equal(b, again) {
		t.Errorf("MarshalDescription is not deterministic:\n%s\n---\n%s", b, again)
	}
	if !strings.Contains(string(b), `"notes <&>"`) || !strings.Contains(string(b), "\n  \"experiments\": [") {
		t.Errorf("description JSON is escaped or not indented:\n%s", b)
	}
	got, err := ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip: got %+v, want %+v", got, d)
	}
}

// TestViewsRoundTrip: tables, charts and write-ups survive the wire form
// (description.json and Describe).
func TestViewsRoundTrip(t *testing.T) {
	d := viewsDescription()
	b, err := MarshalDescription(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip: got %+v, want %+v", got, d)
	}
	for _, want := range []string{`"tables"`, `"charts"`, `"writeups"`, `"baseline"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("description JSON lacks %s:\n%s", want, b)
		}
	}
}

func TestParseDescriptionRefuses(t *testing.T) {
	tests := []struct {
		name, json string
		want       string
	}{
		{"not json", `{`, "plugin description"},
		{"unknown field", `{"name": "x", "version": "1", "experiments": [{"name": "e", "metrics": [{"name": "m", "unit": "s"}], "paramz": []}]}`, "paramz"},
		{"invalid", `{"name": "x", "version": "1"}`, "no experiments"},
		{"bad name", `{"name": "X/y", "version": "1", "experiments": [{"name": "e", "metrics": [{"name": "m", "unit": "s"}]}]}`, "plugin name"},
		{"bad default", `{"name": "x", "version": "1", "experiments": [{"name": "e", "params": [{"name": "n", "type": "int", "default": "many"}], "metrics": [{"name": "m", "unit": "s"}]}]}`, "parameter n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDescription([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseDescription error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

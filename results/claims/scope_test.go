package claims

import "testing"

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
		ok   bool
	}{
		{"1.2.0", "1.2.0", 0, true},
		{"v1.2.0", "1.2", 0, true},
		{"1.10.0", "1.9.9", 1, true},
		{"0.1.0", "0.2.0", -1, true},
		{"1.0.0-rc1", "1.0.0", -1, true},
		{"1.0.0", "1.0.0-rc1", 1, true},
		{"1.0.0-rc1", "1.0.0-rc2", -1, true},
		{"1.0.0+build5", "1.0.0", 0, true},
		{"one", "1.0.0", 0, false},
		{"1.2.3.4", "1.0.0", 0, false},
	} {
		got, ok := compareVersions(tt.a, tt.b)
		if got != tt.want || ok != tt.ok {
			t.Errorf("compareVersions(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSamePoint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want bool
	}{{"8192", "8192.0", true}, {"500", "5e2", true}, {"pty", "pty", true}, {"pty", "null", false}, {"1000", "100", false}} {
		if got := samePoint(tt.a, tt.b); got != tt.want {
			t.Errorf("samePoint(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

package vm

import "testing"

func TestSplitPath(t *testing.T) {
	tests := []struct {
		arg      string
		wantName string
		wantPath string
		wantOK   bool
	}{
		{"vm:/root/x", "vm", "/root/x", true},
		{"vm:rel/x", "vm", "rel/x", true},
		{"vm:", "vm", "", true},
		{"celeron-2.4:/a:b", "celeron-2.4", "/a:b", true},
		{"file", "", "", false},
		{"/abs/file", "", "", false},
		{"./odd:name", "", "", false},
		{"dir/odd:name", "", "", false},
		{":x", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		name, p, ok := SplitPath(tt.arg)
		if name != tt.wantName || p != tt.wantPath || ok != tt.wantOK {
			t.Errorf("SplitPath(%q) = %q, %q, %v; want %q, %q, %v", tt.arg, name, p, ok, tt.wantName, tt.wantPath, tt.wantOK)
		}
	}
}

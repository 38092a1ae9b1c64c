package vm

import "testing"

func TestShellQuote(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"qemu", "-m", "256"}, "qemu -m 256"},
		{[]string{"-cpu", "qemu32,model-id=A B"}, "-cpu 'qemu32,model-id=A B'"},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{""}, "''"},
		{[]string{"unix:/s/q.sock,server=on"}, "unix:/s/q.sock,server=on"},
		{[]string{"a(R)"}, "'a(R)'"},
	}
	for _, tt := range tests {
		if got := ShellQuote(tt.argv); got != tt.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

package images

import "testing"

func TestCPUIdentity(t *testing.T) {
	tests := []struct {
		cpu  CPU
		want string
	}{
		{CPU{Model: "max"}, "max"},
		{CPU{Model: "core2duo", ModelID: "Intel(R) Xeon(R) CPU            5130  @ 2.00GHz", Family: 6, ModelNumber: 15}, "Intel(R) Xeon(R) CPU 5130 @ 2.00GHz (family 6 model 15)"},
		{CPU{Model: "pentium3", Family: 6, ModelNumber: 8}, "pentium3 (family 6 model 8)"},
	}
	for _, tt := range tests {
		if got := tt.cpu.Identity(); got != tt.want {
			t.Errorf("%+v.Identity() = %q, want %q", tt.cpu, got, tt.want)
		}
	}
}

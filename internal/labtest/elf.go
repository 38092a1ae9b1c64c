package labtest

import (
	"encoding/binary"
	"os"
	"testing"
)

// WriteELF writes a minimal ELF executable header for arch ("i386" or
// "x86_64") to path, with extra appended: enough for lab to take it for a
// plugin built for that arch (lab never runs plugin binaries on the host,
// so nothing needs it to run). Different extra bytes give different hashes.
func WriteELF(t testing.TB, path, arch string, extra string) {
	t.Helper()
	var h []byte
	le := binary.LittleEndian
	switch arch {
	case "i386":
		h = make([]byte, 52)
		copy(h, "\x7fELF\x01\x01\x01")
		le.PutUint16(h[16:], 2) // ET_EXEC
		le.PutUint16(h[18:], 3) // EM_386
		le.PutUint32(h[20:], 1)
		le.PutUint16(h[40:], 52)
		le.PutUint16(h[42:], 32)
		le.PutUint16(h[46:], 40)
	case "x86_64":
		h = make([]byte, 64)
		copy(h, "\x7fELF\x02\x01\x01")
		le.PutUint16(h[16:], 2)  // ET_EXEC
		le.PutUint16(h[18:], 62) // EM_X86_64
		le.PutUint32(h[20:], 1)
		le.PutUint16(h[52:], 64)
		le.PutUint16(h[54:], 56)
		le.PutUint16(h[58:], 64)
	default:
		t.Fatalf("WriteELF: unknown arch %q", arch)
	}
	if err := os.WriteFile(path, append(h, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
}

package contract

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// Convention is how a claim's words become a rule's number, written once
// and used the same way by every claim (docs/claims.md, "Word
// conventions"). A claim cites the ones it follows (Claim.Conventions),
// and a description citing one this table lacks does not validate.
type Convention struct {
	// Name is what a claim cites it by ("far", "close").
	Name string `json:"name"`
	// Words are the words of a source it reads.
	Words string `json:"words"`
	// Number is the convention's number: a factor, a margin or a share;
	// 0 where the convention is a rule about the source's own figures
	// rather than a number.
	Number float64 `json:"number"`
	// Rule is the convention in the words of a rule.
	Rule string `json:"rule"`
	// Why justifies it in one line, from the sources' own figures.
	Why string `json:"why"`
}

// conventionsJSON is the table as data: its justifications cite the
// write-ups' figures, which generic code does not name.
//
//go:embed conventions.json
var conventionsJSON []byte

// Conventions are the word conventions, in the order the docs list them.
var Conventions = mustConventions(conventionsJSON)

func mustConventions(data []byte) []Convention {
	var cs []Convention
	if err := json.Unmarshal(data, &cs); err != nil {
		panic("plugins/contract/conventions.json: " + err.Error()) // embedded: a build-time mistake
	}
	return cs
}

// ConventionNamed is the convention a claim cites by name.
func ConventionNamed(name string) (Convention, bool) {
	for _, c := range Conventions {
		if c.Name == name {
			return c, true
		}
	}
	return Convention{}, false
}

// ConventionNames are the conventions' names, comma-separated, for
// errors that list them.
func ConventionNames() string {
	names := make([]string, len(Conventions))
	for i, c := range Conventions {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

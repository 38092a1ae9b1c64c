package main

import "strings"

// sweepValues collects --sweep flags whole. A StringSliceFlag would split
// "n=50,100" at the commas into "n=50" and "100".
type sweepValues struct{ flags []string }

func (s *sweepValues) Set(v string) error {
	s.flags = append(s.flags, v)
	return nil
}

func (s *sweepValues) String() string { return strings.Join(s.flags, " ") }

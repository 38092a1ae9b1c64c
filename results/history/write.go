package history

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"lab/results"
)

// WriteText prints h: the nights; per cell, one line per series (its
// last night's median and range, its noise, its change points); each night's median
// and range for the series that changed (every series with all); and
// each claim's verdict per night with its flips.
func WriteText(w io.Writer, h *History, all bool) error {
	fmt.Fprintf(w, "%d night(s):\n", len(h.Nights))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, n := range h.Nights {
		fmt.Fprintf(tw, "  %d\t%s\t%s UTC\t%d run(s)\t%s\n", i+1, n.Name, n.Start.UTC().Format(time.DateTime), n.Runs, n.Dir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "change points: E-divisive means, t-test p < %g, at least %g%%; unstable: nights or repeats vary by more than %g%%\n\n",
		h.Options.Alpha, h.Options.MinChange, h.Options.MinChange/2)
	// A block a cell, its series aligned under its name: a cell's name
	// (its parameters) can be long, and is said once.
	for i, s := range h.Series {
		if i == 0 || s.Cell != h.Series[i-1].Cell {
			if i > 0 {
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, s.Cell)
			tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  SERIES\tNIGHTS\tLAST MEDIAN (RANGE)\tNOISE NIGHTS / REPEATS\tCHANGE POINTS")
		}
		last := s.Points[len(s.Points)-1]
		noise := fmt.Sprintf("%.2g%% / %.2g%%", s.Noise, s.RepeatNoise)
		if s.Unstable {
			noise += " unstable"
		}
		if s.TickSampled {
			noise += " tick-sampled"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", s.Name(), len(s.Points), medianRange(last, s.Unit), noise, changes(h, s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range h.Series {
		if !all && len(s.Changes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s %s, per night:\n", s.Cell, s.Name())
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NIGHT\tMEDIAN (RANGE)\tN\t")
		for _, p := range s.Points {
			mark := ""
			for _, c := range s.Changes {
				if c.Night == p.Night {
					mark = fmt.Sprintf("<- %s", c.Text())
				}
			}
			fmt.Fprintf(tw, "  %d %s\t%s\t%d\t%s\n", p.Night+1, h.Nights[p.Night].Name, medianRange(p, s.Unit), p.N, mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(h.Claims) > 0 {
		fmt.Fprintf(w, "\nclaims, verdict per night (%s):\n", results.LetterKey)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := []string{"CLAIM"}
		for i := range h.Nights {
			head = append(head, strconv.Itoa(i+1))
		}
		fmt.Fprintln(tw, strings.Join(append(head, "FLIPS"), "\t"))
		quiet := 0
		for _, c := range h.Claims {
			if !c.Tested() {
				quiet++
				continue
			}
			row := []string{c.ID}
			for _, v := range c.Verdicts {
				row = append(row, results.Letter(v))
			}
			var flips []string
			for _, f := range c.Flips {
				flips = append(flips, fmt.Sprintf("night %d: %s -> %s", f.Night+1, f.From, f.To))
			}
			if len(flips) == 0 {
				flips = []string{"none"}
			}
			fmt.Fprintln(tw, strings.Join(append(row, strings.Join(flips, "; ")), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if quiet > 0 {
			fmt.Fprintf(w, "%d other claim(s): not run or untestable here every night (--json lists them)\n", quiet)
		}
	}
	return nil
}

func medianRange(p Point, unit string) string {
	return fmt.Sprintf("%s %s (%s..%s)", Value(p.Median), unit, Value(p.Min), Value(p.Max))
}

// Value is a night's figure as lab history and its report section show
// it: 4 significant digits (3 would hide changes of a few tenths of a
// percent), whole from 1000 up.
func Value(v float64) string { return results.FormatSig(v, 4) }

// Label is the change as a plot marks it: "+25.0% worse".
func (c Change) Label() string {
	way := "better"
	if c.Worse {
		way = "worse"
	}
	return fmt.Sprintf("%+.1f%% %s", c.Change, way)
}

// Text is the change with its levels and p-value: "+25.0% worse (1 ->
// 1.25, p 2e-07)".
func (c Change) Text() string {
	return fmt.Sprintf("%s (%s -> %s, p %.2g)", c.Label(), Value(c.Before), Value(c.After), c.P)
}

func changes(h *History, s Series) string {
	if len(s.Points) < 3 {
		return "too few nights to tell"
	}
	if len(s.Changes) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range s.Changes {
		parts = append(parts, fmt.Sprintf("night %d (%s): %s", c.Night+1, h.Nights[c.Night].Name, c.Text()))
	}
	return strings.Join(parts, "; ")
}

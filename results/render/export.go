package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"lab/results"
)

// Formats are what Export writes.
var Formats = []string{"table", "json", "csv", "junit", "markdown", "gobench"}

// Export writes runs in format: table (the run summary lab run prints),
// json (one document, or an array of them), csv (one row per sample),
// junit (one suite per run, see RunSuite), markdown or gobench (Go's
// benchmark format, one line per sample, see WriteGoBench).
func Export(w io.Writer, format string, runs []*results.Result) error {
	switch format {
	case "table", "":
		return eachRun(w, runs, WriteTableAll)
	case "json":
		if len(runs) == 1 {
			return WriteJSON(w, runs[0])
		}
		if runs == nil {
			runs = []*results.Result{}
		}
		data, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	case "csv":
		return WriteCSVRuns(w, runs)
	case "junit":
		return WriteJUnit(w, runs)
	case "markdown":
		return eachRun(w, runs, WriteMarkdown)
	case "gobench":
		return WriteGoBench(w, runs)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// eachRun writes every run with write, a blank line between them.
func eachRun(w io.Writer, runs []*results.Result, write func(io.Writer, *results.Result) error) error {
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := write(w, r); err != nil {
			return err
		}
	}
	return nil
}

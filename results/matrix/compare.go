package matrix

import (
	"fmt"
	"io"
	"os"
	"slices"

	"lab/results"
	"lab/results/compare"
)

// StoreCell is one cell compared between two stores.
type StoreCell struct {
	Cell    string           `json:"cell"`
	A       string           `json:"a"`
	B       string           `json:"b"`
	Changes []compare.Change `json:"changes"`
	a, b    compare.Side
}

// StoreComparison is two stores compared cell by cell.
type StoreComparison struct {
	Cells []StoreCell
	// Only are the cells of B that A has no run of.
	Only []string
	// Regressions are the changes worse by more than the percentage asked
	// for, a line each ("CELL: METRIC +7.2%").
	Regressions []string
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// IsStore says whether what the user typed names a directory (a result
// store or a matrix's output), not a run.
func IsStore(p string) bool { return isDir(p) }

// storeOf is a directory's runs: a result store, or a lab matrix output
// directory (its results/).
func storeOf(dir string) ([]*results.Result, []error, error) {
	if !isDir(dir) {
		return nil, nil, fmt.Errorf("%s is not a directory: compare two result stores, or two runs", dir)
	}
	dir = results.StoreIn(dir)
	runs, skipped := results.LoadAll(dir)
	if len(runs) == 0 {
		return nil, skipped, fmt.Errorf("%s holds no runs", dir)
	}
	return runs, skipped, nil
}

// newestPerCell is each cell's newest run (runs are newest first) and
// the cells in order.
func newestPerCell(runs []*results.Result) (map[string]*results.Result, []string) {
	m := map[string]*results.Result{}
	var keys []string
	for _, r := range runs {
		k := results.CellKey(r)
		if _, ok := m[k]; !ok {
			m[k] = r
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return m, keys
}

// CompareStores compares two stores (or matrix output directories) cell
// by cell: the newest run of B in each cell against A's newest run of the
// same cell. Runs that measure different things are refused unless force;
// the cells compared before the one refused are returned with the error.
// With pct >= 0 the changes worse by more than pct percent are listed.
// skipped are the result files that did not load, for the caller to name.
func CompareStores(aDir, bDir string, force bool, pct float64) (c *StoreComparison, skipped []error, err error) {
	as, skipped, err := storeOf(aDir)
	if err != nil {
		return nil, skipped, err
	}
	bs, bskipped, err := storeOf(bDir)
	skipped = append(skipped, bskipped...)
	if err != nil {
		return nil, skipped, err
	}
	am, _ := newestPerCell(as)
	bm, bkeys := newestPerCell(bs)
	c = &StoreComparison{}
	for _, k := range bkeys {
		a, ok := am[k]
		if !ok {
			c.Only = append(c.Only, k)
			continue
		}
		sa := compare.Side{Name: a.ID, Runs: []*results.Result{a}}
		sb := compare.Side{Name: bm[k].ID, Runs: []*results.Result{bm[k]}}
		if !force {
			if err := compare.CheckComparable(sa, sb); err != nil {
				return c, skipped, fmt.Errorf("cell %s: %w", k, err)
			}
		}
		cell := StoreCell{Cell: k, A: sa.Name, B: sb.Name, Changes: compare.CompareSides(sa, sb), a: sa, b: sb}
		c.Cells = append(c.Cells, cell)
		if pct >= 0 {
			for _, r := range compare.Summaries(compare.Regressions(cell.Changes, pct)) {
				c.Regressions = append(c.Regressions, k+": "+r)
			}
		}
	}
	if len(c.Cells) == 0 {
		return c, skipped, fmt.Errorf("%s and %s share no cell (the same plugin, experiment, profile, clock and parameters): nothing to compare", aDir, bDir)
	}
	return c, skipped, nil
}

// WriteStoreCells prints each cell's comparison under its name.
func WriteStoreCells(w io.Writer, cells []StoreCell) error {
	for _, c := range cells {
		fmt.Fprintf(w, "== %s\n", c.Cell)
		if err := compare.WriteChanges(w, c.a, c.b, c.Changes); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

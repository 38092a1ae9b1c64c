package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/results"
	"lab/results/history"
)

func historyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "nights read as a series: each cell's nightly medians, their change points, each claim's verdict per night",
		ArgsUsage: "[NIGHT...]",
		Description: "Each NIGHT is a result store or a lab matrix output directory (its results/),\n" +
			"one a night; they are ordered by their first run's start, whatever order they\n" +
			"are given in. A single directory holding no run itself is a directory of\n" +
			"nights (its subdirectories that are stores or matrix outputs); a single store\n" +
			"whose runs span nights is split by the UTC date its runs started. With no\n" +
			"NIGHT, the result store (--results, else the default store) is that store.\n\n" +
			"Per cell (profile, plugin, experiment, parameters, clock) and metric: each\n" +
			"night's median of its samples and their range, and the change points in the\n" +
			"nightly medians, found by E-divisive means (Matteson and James, 2014) with a\n" +
			"Student's t-test between the nights either side of each split, as Hunter\n" +
			"(Apache Otava) does: a change point is significant (p < --alpha) and at least\n" +
			"--min-change percent. The same nights always give the same change points. A\n" +
			"series whose nights vary (around its levels) by more than half --min-change\n" +
			"is marked unstable, and a metric counting timer ticks (a CPU time from rusage,\n" +
			"as its plugin declares) tick-sampled: their changes are shown, but no gate\n" +
			"fails on them (on an unstable series, none within 6 times its noise). Per\n" +
			"claim: its verdict from each night's runs alone, and where it flipped.\n" +
			"docs/history.md has the false-alarm and detection rates behind the defaults.\n\n" +
			"With --fail-on-change the command exits 1 when a series that is not unstable\n" +
			"has a change point the worse way (up for times and sizes, down for rates)\n" +
			"whose new level began in the last --last nights. It takes a change some\n" +
			"nights to be seen (docs/history.md), so --last is more than one.\n\n" +
			"Examples:\n   lab history nights/*\n" +
			"   lab history nights/ --fail-on-change --last 5\n" +
			"   lab history --all          # the default store's runs, a night per UTC date\n" +
			"   lab history nights/* --json",
		Flags: append(append([]cli.Flag{jsonFlag, storeFlag,
			&cli.BoolFlag{Name: "all", Usage: "print every series' medians night by night, not only those that changed"}},
			changeFlags("")...),
			&cli.BoolFlag{Name: "fail-on-change", Usage: "exit 1 on a change point the worse way in the last --last nights"},
			&cli.IntFlag{Name: "last", Value: history.DefaultLast, Usage: "the gate looks at change points that began in the last `K` nights"},
		),
		Action: func(c *cli.Context) error {
			o, err := historyOptions(c)
			if err != nil {
				return err
			}
			last := c.Int("last")
			if last < 1 {
				return fmt.Errorf("--last %d: want 1 or more nights (default %d)", last, history.DefaultLast)
			}
			nights := c.Args().Slice()
			if len(nights) == 0 {
				store, err := e.storeDir(c)
				if err != nil {
					return err
				}
				if paths, _ := results.List(store); len(paths) == 0 {
					return fmt.Errorf("lab history needs nights, and the result store %s holds no run: name result stores or lab matrix output directories, one a night (lab history nights/*)", store)
				}
				nights = []string{store}
			} else if c.IsSet("results") {
				return fmt.Errorf("--results and nights both given: name the nights, or --results for one store whose runs span nights")
			}
			h, warnings, skipped, err := engine.History(engine.HistoryRequest{Nights: nights, Options: o,
				Plugins: e.roots.plugins, ProfileDir: e.roots.profiles})
			for _, w := range warnings {
				fmt.Fprintf(e.stderr, "warning: %v\n", w)
			}
			warnSkipped(e.stderr, skipped)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := printJSON(e.stdout, h); err != nil {
					return err
				}
			} else if err := history.WriteText(e.stdout, h, c.Bool("all")); err != nil {
				return err
			}
			if !c.Bool("fail-on-change") {
				return nil
			}
			if len(h.Nights) < 3 {
				fmt.Fprintf(e.stderr, "note: %d night(s): a change point needs 3 or more; the gate cannot tell yet and passes\n", len(h.Nights))
			}
			for _, a := range h.Ungated(last) {
				fmt.Fprintf(e.stderr, "note: not gated, %s: %s\n", a.Ungated, a)
			}
			if alarms := h.Alarms(last); len(alarms) > 0 {
				var names []string
				for _, a := range alarms {
					names = append(names, a.String())
				}
				return &exitCode{code: 1, msg: fmt.Sprintf("%d change(s) the worse way in the last %d night(s): %s", len(alarms), last, strings.Join(names, "; "))}
			}
			return nil
		},
	}
}

// changeFlags are the change-point detector's thresholds, for lab
// history and lab report --history; when says when they apply ("" or
// "with --history: ").
func changeFlags(when string) []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: "alpha", Value: history.DefaultAlpha, Usage: when + "a change point's t-test must give p < `P`"},
		&cli.Float64Flag{Name: "min-change", Value: history.DefaultMinChange, Usage: when + "report change points of at least `PCT` percent"},
	}
}

// historyOptions are the detector's thresholds changeFlags set.
func historyOptions(c *cli.Context) (history.Options, error) {
	o := history.Options{Alpha: c.Float64("alpha"), MinChange: c.Float64("min-change")}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, fmt.Errorf("--alpha %g: want a significance between 0 and 1 (default %g)", o.Alpha, history.DefaultAlpha)
	}
	if !(o.MinChange >= 0) {
		return o, fmt.Errorf("--min-change %g: want a percentage of 0 or more (default %g)", o.MinChange, history.DefaultMinChange)
	}
	return o, nil
}

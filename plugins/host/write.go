package host

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lab/plugins"
)

// WriteList lists plugins (`lab plugins`): a line per experiment, with
// its parameters' defaults and its metrics.
func WriteList(w io.Writer, descs []*plugins.Description) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tEXPERIMENT\tPARAMETERS\tMETRICS")
	for _, d := range descs {
		for i, x := range d.Experiments {
			name := ""
			if i == 0 {
				name = d.Name + " " + d.Version
			}
			var ps, ms []string
			for _, p := range x.Params {
				ps = append(ps, fmt.Sprintf("%s=%s", p.Name, p.Default))
			}
			for _, m := range x.Metrics {
				ms = append(ms, fmt.Sprintf("%s (%s)", m.Name, m.Unit))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, x.Name, strings.Join(ps, " "), strings.Join(ms, ", "))
		}
	}
	return tw.Flush()
}

// WriteDescription prints a plugin's description in full (`lab plugins
// show`): each experiment's parameters, metrics, the published figures it
// is compared with and the claims it decides.
func WriteDescription(w io.Writer, d *plugins.Description) {
	fmt.Fprintf(w, "%s %s: %s\n", d.Name, d.Version, d.Summary)
	for i, x := range d.Experiments {
		def := ""
		if i == 0 {
			def = " (default)"
		}
		fmt.Fprintf(w, "\nexperiment %s%s: %s\n", x.Name, def, x.Summary)
		fmt.Fprintln(w, "  parameters (-p NAME=VALUE):")
		for _, p := range x.Params {
			fmt.Fprintf(w, "    %s\n", p.String())
		}
		fmt.Fprintln(w, "  metrics:")
		for _, m := range x.Metrics {
			fmt.Fprintf(w, "    %-24s %-4s %s\n", m.Name, m.Unit, m.Help)
		}
		if len(x.References) > 0 {
			fmt.Fprintln(w, "  published figures it is compared with:")
			for _, r := range x.References {
				fmt.Fprintf(w, "    %-24s %10g %-3s %s (%s)\n", r.Metric, r.Value, r.Unit, r.Machine, r.Source)
			}
		}
		if len(x.Claims) > 0 {
			fmt.Fprintln(w, "  claims it decides (see `lab claims show ID`):")
			for _, c := range x.Claims {
				fmt.Fprintf(w, "    %-6s %-9s %s\n", c.ID, c.Kind(), c.Statement)
			}
		}
	}
}

package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/render"
)

// ReportRequest says what a report shows: the runs of the store Store
// that Filter passes (all of them with AllRuns, else render.ChooseRuns's
// choice) and the experiments and claims of the plugins Plugins finds.
type ReportRequest struct {
	Store     string
	Filter    results.Filter
	AllRuns   bool
	Plugins   host.SearchPath
	Generated time.Time
	// Version is lab's version line, printed on the page.
	Version string
	// ProfileDir is the user's profile directory and ProfileFiles
	// more profiles: the catalogue's profiles give the claims' judge
	// their variants and calibrations.
	ProfileDir   string
	ProfileFiles []string
}

// Report gathers what render.WriteReport draws: every installed
// plugin's experiments (those the filter's plugin and experiment pick),
// the write-ups they all declare, the runs the filter passes and the
// claims' statuses over them. warnings are the plugins whose description
// does not read and write-ups declared twice; skipped the result files
// that do not load (the page names them too).
func Report(req ReportRequest) (in render.ReportInput, warnings, skipped []error) {
	store, skipped := results.LoadAll(req.Store)
	return reportFrom(req, store, skipped)
}

// reportFrom is Report of store, the runs of req.Store already read,
// and skipped, the files that did not load.
func reportFrom(req ReportRequest, store []*results.Result, skipped []error) (render.ReportInput, []error, []error) {
	in := render.ReportInput{Generated: req.Generated, Version: req.Version, Store: req.Store, Filter: req.Filter,
		AllRuns: req.AllRuns, SearchPath: req.Plugins.Dirs()}
	descs, warnings := req.Plugins.DescribeAll()
	var all []render.ReportExperiment
	for _, d := range descs {
		for i := range d.Experiments {
			all = append(all, reportExperiment(d, &d.Experiments[i]))
		}
	}
	f := req.Filter
	for _, x := range all {
		if (f.Plugin == "" || x.Plugin == f.Plugin) && (f.Experiment == "" || x.Name == f.Experiment) {
			in.Experiments = append(in.Experiments, x)
		}
	}
	// The sections: the write-ups every installed plugin declares.
	var err error
	if in.WriteUps, err = render.WriteUpsOf(all); err != nil {
		warnings = append(warnings, err)
	}
	var claims []results.Claim
	for _, x := range in.Experiments {
		claims = append(claims, x.Claims...)
	}
	rclaims.Sort(claims)
	for _, r := range store {
		if f.Match(r) {
			in.Runs = append(in.Runs, r)
		}
	}
	for _, err := range skipped {
		in.Skipped = append(in.Skipped, err.Error())
	}
	profiles, err := CatalogProfiles(req.ProfileDir, req.ProfileFiles...)
	if err != nil {
		warnings = append(warnings, fmt.Errorf("profiles: %w; claims judged with the built-in profiles' calibrations", err))
	}
	// Every claim is judged from the runs the filter passes (--all-runs:
	// all of them, else the latest of each cell).
	in.Claims = rclaims.JudgeStore(claims, in.Runs, profiles, rclaims.Options{All: req.AllRuns})
	return in, warnings, skipped
}

// WriteReportPage writes the report page of in as dir/index.html and
// returns its absolute path.
func WriteReportPage(in render.ReportInput, dir string) (string, error) {
	var page bytes.Buffer
	if err := render.WriteReport(&page, in); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "index.html")
	if err := results.WriteAtomic(path, page.Bytes()); err != nil {
		return "", fmt.Errorf("write report %s: %w", path, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// reportExperiment is what the report shows of experiment x of plugin d:
// its metrics, published figures, claims and views.
func reportExperiment(d *plugins.Description, x *plugins.Experiment) render.ReportExperiment {
	re := render.ReportExperiment{Plugin: d.Name, PluginVersion: d.Version, Name: x.Name, Summary: x.Summary,
		References: host.References(x), Claims: host.Claims(d.Name, x), Views: host.Views(x), ParamHelp: map[string]string{}}
	for _, m := range x.Metrics {
		re.Metrics = append(re.Metrics, m.Name)
	}
	for _, p := range x.Params {
		re.ParamHelp[p.Name] = p.Help
	}
	return re
}

// ClaimStatuses gathers every claim the plugins on the search path
// declare, in order, each judged from the runs of the result store dir in
// its scope (the latest of each cell; with all, every one), with the
// variants and calibrations of the profile catalogue (the built-in
// profiles and those of profileDir). An empty or missing store is fine:
// every claim is then `not run`. warnings are the plugins whose
// description does not read, the result files that do not load and a
// catalogue that does not.
func ClaimStatuses(path host.SearchPath, profileDir, dir string, all bool) (sts []rclaims.ClaimStatus, warnings []error) {
	claims, profiles, warnings := claimsToJudge(path, profileDir)
	if len(claims) == 0 {
		return nil, warnings
	}
	store, skipped := results.LoadAll(dir)
	return rclaims.JudgeStore(claims, store, profiles, rclaims.Options{All: all}), append(warnings, skipped...)
}

// claimsToJudge are the claims the plugins on path declare, in order,
// and the profile catalogue that judges them.
func claimsToJudge(path host.SearchPath, profileDir string) ([]results.Claim, rclaims.Profiles, []error) {
	descs, warnings := path.DescribeAll()
	var claims []results.Claim
	for _, d := range descs {
		claims = append(claims, host.AllClaims(d)...)
	}
	rclaims.Sort(claims)
	if len(claims) == 0 {
		return nil, nil, warnings
	}
	profiles, err := CatalogProfiles(profileDir)
	if err != nil {
		warnings = append(warnings, fmt.Errorf("profiles: %w; claims judged with the built-in profiles' calibrations", err))
	}
	return claims, profiles, warnings
}

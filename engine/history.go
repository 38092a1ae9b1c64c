package engine

import (
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/history"
)

// HistoryRequest is a series of nights to read.
type HistoryRequest struct {
	// Nights are result stores or lab matrix output directories, one a
	// night, or one store whose runs span nights.
	Nights  []string
	Options history.Options
	// Plugins and ProfileDir give the claims judged each night and the
	// profiles that judge them.
	Plugins    host.SearchPath
	ProfileDir string
}

// History reads the nights of req as series (history.Build): each
// claim the installed plugins declare is judged from each night's runs
// alone. warnings are plugins or profiles that did not read; skipped the
// result files that did not load.
func History(req HistoryRequest) (h *history.History, warnings, skipped []error, err error) {
	nights, skipped, err := history.LoadNights(req.Nights)
	if err != nil {
		return nil, nil, skipped, err
	}
	claims, profiles, warnings := claimsToJudge(req.Plugins, req.ProfileDir)
	var judge history.Judge
	if len(claims) > 0 {
		judge = func(runs []*results.Result) []rclaims.ClaimStatus {
			return rclaims.JudgeStore(claims, runs, profiles, rclaims.Options{})
		}
	}
	return history.Build(nights, req.Options, judge), warnings, skipped, nil
}

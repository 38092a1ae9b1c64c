package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"lab/results"
)

// JUnit XML, the subset CI systems read: testsuites > testsuite >
// testcase with failure, error or skipped.
type (
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr,omitempty"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	JUnitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       float64         `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []JUnitProperty `xml:"properties>property,omitempty"`
		Cases      []JUnitCase     `xml:"testcase"`
	}
	JUnitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      float64       `xml:"time,attr"`
		Failure   *JUnitProblem `xml:"failure,omitempty"`
		Error     *JUnitProblem `xml:"error,omitempty"`
		Skipped   *JUnitProblem `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	JUnitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// Add counts the suite's cases and appends it.
func (s *JUnitSuites) Add(suite JUnitSuite) {
	suite.Tests, suite.Failures, suite.Errors, suite.Skipped = len(suite.Cases), 0, 0, 0
	for _, c := range suite.Cases {
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	s.Suites = append(s.Suites, suite)
	s.Tests += suite.Tests
	s.Failures += suite.Failures
	s.Errors += suite.Errors
	s.Skipped += suite.Skipped
}

// Write writes the document with its XML header.
func (s *JUnitSuites) Write(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// RunSuite is one run as a JUnit test suite: the run itself is a case
// (a failure when it failed, an error when it was interrupted), and so
// is each verdict: not reproduced and the dependent verdicts (strata
// decided both ways) are failures, reproduced passes, and a claim the
// run could not decide (inconclusive, not comparable, untestable here,
// not run) is skipped, with the reason.
func RunSuite(r *results.Result) JUnitSuite {
	class := r.Plugin + "." + r.Experiment
	profile := results.ProfileName(r.Machine)
	s := JUnitSuite{Name: fmt.Sprintf("%s/%s on %s (%s)", r.Plugin, r.Experiment, profile, r.ID),
		Time: r.Finished.Sub(r.Started).Seconds(), Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05")}
	if s.Time < 0 {
		s.Time = 0
	}
	for _, kv := range [][2]string{{"run", r.ID}, {"profile", profile}, {"accelerator", r.Machine.Accelerator},
		{"clock", r.Machine.Clock}, {"parameters", results.FormatLabels(r.Parameters)}, {"plugin_version", r.PluginVersion}} {
		s.Properties = append(s.Properties, JUnitProperty{Name: kv[0], Value: kv[1]})
	}
	run := JUnitCase{Name: "run", Classname: class, Time: s.Time, SystemOut: SummaryText(r)}
	switch r.Outcome.Status {
	case results.StatusFailed:
		run.Failure = &JUnitProblem{Message: r.Outcome.Reason, Type: "failed", Text: r.Outcome.StderrTail}
	case results.StatusInterrupted:
		run.Error = &JUnitProblem{Message: r.Outcome.Reason, Type: results.StatusInterrupted}
	}
	s.Cases = append(s.Cases, run)
	for _, v := range r.Verdicts {
		s.Cases = append(s.Cases, VerdictCase(class, v))
	}
	return s
}

// VerdictCase is one verdict as a test case named after its claim.
func VerdictCase(class string, v results.Verdict) JUnitCase {
	c := JUnitCase{Name: v.Claim + ": " + v.Statement, Classname: class, SystemOut: v.Rule + "\n" + v.Reason}
	c.Judge(v.Verdict, &JUnitProblem{Message: results.OrUnknown(v.Verdict) + ": " + v.Reason})
	if c.Failure != nil {
		c.Failure.Type = v.Verdict
	}
	return c
}

// Judge gives c the outcome of verdict v, by what it says of its claim
// (results.ClassOf): a claim that held passes; one that did not (not
// reproduced, dependent) fails with p; any other is skipped with p.
func (c *JUnitCase) Judge(v string, p *JUnitProblem) {
	switch results.ClassOf(v) {
	case results.ClassPassed:
	case results.ClassFailed, results.ClassSplit:
		c.Failure = p
	default:
		c.Skipped = p
	}
}

// SummaryText is the system-out of a run's JUnit case: one line per
// summary, its median and count.
func SummaryText(r *results.Result) string {
	var b strings.Builder
	for _, s := range r.Summary {
		fmt.Fprintf(&b, "%s%s median %s %s (n %d)\n", s.Metric, results.LabelSuffix(s.Labels), results.FormatValue(s.Median), s.Unit, s.N)
	}
	return b.String()
}

// WriteJUnit writes runs as JUnit XML, one suite per run.
func WriteJUnit(w io.Writer, runs []*results.Result) error {
	doc := &JUnitSuites{Name: "lab results"}
	for _, r := range runs {
		doc.Add(RunSuite(r))
	}
	return doc.Write(w)
}

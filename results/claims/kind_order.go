package claims

import (
	"fmt"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

func init() { register(func(r *contract.OrderClaim) kind { return orderKind{r: r} }) }

// orderKind: series of one metric told apart by a label, ordered pair by
// pair within a run (Order, order.go).
type orderKind struct {
	within
	r *contract.OrderClaim
}

func (k orderKind) text() string {
	o := k.r
	var pairs []string
	for _, a := range o.Above {
		for _, b := range o.Below {
			pairs = append(pairs, a+" > "+b)
		}
	}
	for _, p := range o.Pairs {
		pairs = append(pairs, p.Above+" > "+p.Below)
	}
	return fmt.Sprintf("%s by %s, each pair's ratio above %s within a run: %s%s (signed-rank on the per-repeat log ratios; %s)",
		o.Metric, o.Label, results.FormatValue(o.Min), strings.Join(pairs, ", "), seriesNote(o.Labels), testWords)
}

func (k orderKind) rule() OrderRule {
	o := k.r
	rule := OrderRule{Label: o.Label, Above: o.Above, Below: o.Below, Min: o.Min}
	for _, p := range o.Pairs {
		rule.Pairs = append(rule.Pairs, [2]string{p.Above, p.Below})
	}
	return rule
}

func (k orderKind) minRepeats(s *spec) int {
	return signedN(max(len(k.rule().pairs()), 1) * s.npoints())
}

func (k orderKind) decide(s *spec, st *stratum) Decision {
	o, rule := k.r, k.rule()
	vals := map[string][]Value{}
	for _, ab := range rule.pairs() {
		for _, v := range ab {
			if _, ok := vals[v]; !ok {
				vals[v] = s.series(st.units, o.Metric, merge(o.Labels, map[string]string{o.Label: v}))
			}
		}
	}
	return Order(vals, rule)
}

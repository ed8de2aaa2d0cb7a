package braintest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Series is the series of the metric name gathered from g whose labels include every
// name, value pair of labels (all of its series when none are given).
func Series(t testing.TB, g prometheus.Gatherer, name string, labels ...string) []*dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if HasLabels(m, labels...) {
				out = append(out, m)
			}
		}
	}
	return out
}

// Metric is the value of the first counter or gauge series Series finds; ok is false
// when it finds none.
func Metric(t testing.TB, g prometheus.Gatherer, name string, labels ...string) (v float64, ok bool) {
	t.Helper()
	s := Series(t, g, name, labels...)
	if len(s) == 0 {
		return 0, false
	}
	if c := s[0].GetCounter(); c != nil {
		return c.GetValue(), true
	}
	return s[0].GetGauge().GetValue(), true
}

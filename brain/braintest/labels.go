package braintest

import (
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// HasLabels reports whether m carries every name, value pair of labels ("server", "web").
func HasLabels(m *dto.Metric, labels ...string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}) {
			return false
		}
	}
	return true
}

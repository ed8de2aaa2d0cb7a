package braintest

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

func TestHasLabels(t *testing.T) {
	t.Parallel()
	m := &dto.Metric{Label: []*dto.LabelPair{
		{Name: proto.String("server"), Value: proto.String("web")},
		{Name: proto.String("outcome"), Value: proto.String("ok")},
	}}
	tests := []struct {
		labels []string
		want   bool
	}{
		{nil, true},
		{[]string{"server", "web"}, true},
		{[]string{"outcome", "ok", "server", "web"}, true},
		{[]string{"server", "gone"}, false},
		{[]string{"server", "web", "tool", "echo"}, false},
	}
	for _, tc := range tests {
		if got := HasLabels(m, tc.labels...); got != tc.want {
			t.Errorf("HasLabels(%q) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

package metric_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain/metric"
)

// TestFactoryRegistersWhatItIsTold: each kind is registered under its name with its help,
// type, labels and (for a histogram) buckets, as the options struct it stands for would be.
func TestFactoryRegistersWhatItIsTold(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := metric.With(reg)
	buckets := []float64{0.5, 2}
	f.Counter("t_plain_total", "A counter.").Add(2)
	f.CounterVec("t_by_total", "A counter by kind.", "kind", "outcome").WithLabelValues("voice", "ok").Inc()
	f.Gauge("t_level", "A gauge.").Set(3)
	f.Histogram("t_seconds", "A histogram.", buckets).Observe(1)
	f.HistogramVec("t_by_seconds", "A histogram by model.", buckets, "model").WithLabelValues("m").Observe(3)
	want := `# HELP t_by_seconds A histogram by model.
# TYPE t_by_seconds histogram
t_by_seconds_bucket{model="m",le="0.5"} 0
t_by_seconds_bucket{model="m",le="2"} 0
t_by_seconds_bucket{model="m",le="+Inf"} 1
t_by_seconds_sum{model="m"} 3
t_by_seconds_count{model="m"} 1
# HELP t_by_total A counter by kind.
# TYPE t_by_total counter
t_by_total{kind="voice",outcome="ok"} 1
# HELP t_level A gauge.
# TYPE t_level gauge
t_level 3
# HELP t_plain_total A counter.
# TYPE t_plain_total counter
t_plain_total 2
# HELP t_seconds A histogram.
# TYPE t_seconds histogram
t_seconds_bucket{le="0.5"} 0
t_seconds_bucket{le="2"} 1
t_seconds_bucket{le="+Inf"} 1
t_seconds_sum 1
t_seconds_count 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// TestKnownStartsAtZero: the known values are series before the first event, at 0; others
// are not.
func TestKnownStartsAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	vec := metric.Known(metric.With(reg).CounterVec("t_runs_total", "Runs by outcome.", "outcome"), "ok", "failed")
	if n := testutil.CollectAndCount(vec); n != 2 {
		t.Fatalf("%d series before any event, want 2 (ok, failed)", n)
	}
	want := `# HELP t_runs_total Runs by outcome.
# TYPE t_runs_total counter
t_runs_total{outcome="failed"} 0
t_runs_total{outcome="ok"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// TestNilRegistererWorks: with no Registerer the metrics count but nothing gathers them,
// and building the same names twice does not panic.
func TestNilRegistererWorks(t *testing.T) {
	for range 2 {
		c := metric.With(nil).Counter("t_plain_total", "A counter.")
		c.Inc()
		if got := testutil.ToFloat64(c); got != 1 {
			t.Fatalf("counter = %v, want 1", got)
		}
	}
}

// TestSameNameTwicePanics: a registered name cannot be registered again (promauto's rule,
// kept), so two packages cannot silently share a metric.
func TestSameNameTwicePanics(t *testing.T) {
	f := metric.With(prometheus.NewRegistry())
	f.Gauge("t_level", "A gauge.")
	defer func() {
		if recover() == nil {
			t.Fatal("registering t_level twice did not panic")
		}
	}()
	f.Gauge("t_level", "A gauge.")
}

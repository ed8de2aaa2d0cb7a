package bot_test

import (
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// scrape reads anima's /metrics as metric families.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// replyLatency is the anima_reply_latency_seconds histogram of kind in mfs.
func replyLatency(t *testing.T, mfs map[string]*dto.MetricFamily, kind string) *dto.Histogram {
	t.Helper()
	mf := mfs["anima_reply_latency_seconds"]
	if mf == nil {
		t.Fatal("/metrics lacks anima_reply_latency_seconds")
	}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "kind" && lp.GetValue() == kind {
				return m.GetHistogram()
			}
		}
	}
	t.Fatalf("/metrics lacks anima_reply_latency_seconds{kind=%q}", kind)
	return nil
}

// observedLatency polls /metrics until kind's reply latency has an observation (it is
// recorded right after sendMessage returns) and returns the histogram.
func observedLatency(t *testing.T, addr, kind string) *dto.Histogram {
	t.Helper()
	ctx := waitCtx(t)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		lat := replyLatency(t, scrape(t, addr), kind)
		if lat.GetSampleCount() > 0 {
			return lat
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no %s reply latency observed", kind)
		}
	}
}

// bucket is the cumulative count of h's bucket with upper bound le.
func bucket(t *testing.T, h *dto.Histogram, le float64) uint64 {
	t.Helper()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	t.Fatalf("no bucket le=%v", le)
	return 0
}

func TestReplyLatencyIsMeasured(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addrs := h.run()
	for _, kind := range []string{"reply", "system", "reminder", "followup"} {
		if n := replyLatency(t, scrape(t, addrs.Metrics), kind).GetSampleCount(); n != 0 {
			t.Errorf("kind %s starts at %d observations, want 0", kind, n)
		}
	}
	slow := openaitest.Answer("part one", "active", 0.9)
	slow.Delay = 300 * time.Millisecond
	h.ai.Enqueue(slow)
	h.say("how long do I wait?")
	lat := observedLatency(t, addrs.Metrics, "reply")
	if n := lat.GetSampleCount(); n != 1 {
		t.Fatalf("%d reply latencies observed, want 1", n)
	}
	if s := lat.GetSampleSum(); s < 0.3 || s > 10 {
		t.Errorf("reply latency %.3fs; the model alone took 0.3s", s)
	}
	if bucket(t, lat, 0.25) != 0 || bucket(t, lat, 10) != 1 || bucket(t, lat, 120) != 1 {
		t.Errorf("buckets %v: want the observation above 0.25s and below 10s", lat.GetBucket())
	}
}

// TestReplyLatencySurvivesRestart: a reply that could not be delivered before a restart
// is measured from its question's arrival in the earlier run.
func TestReplyLatencySurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The stop finds the reply's send waiting out the pause: the loop cancels it after its
	// stop grace (5 s, spent idle here) and the reply stays in the outbox either way.
	h.opts.StopGrace = 200 * time.Millisecond
	_, stop := h.start()
	// Telegram asks for a minute's pause: anima is stopped while it waits.
	h.tg.FailNext("sendMessage", 1, http.StatusTooManyRequests, 60)
	pushed := time.Now()
	h.tg.PushText(user, user, "are you there?")
	calls, err := h.tg.WaitCalls(waitCtx(t), "sendMessage", 1)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if n := len(h.tg.Sent()); n != 0 {
		t.Fatalf("%d messages delivered before the restart, want 0", n)
	}

	restarted := time.Now()
	addrs := h.run()
	h.waitSent(1, "anima's messages")
	lat := observedLatency(t, addrs.Metrics, "reply")
	if n := lat.GetSampleCount(); n != 1 {
		t.Fatalf("%d reply latencies observed after the restart, want 1", n)
	}
	// The question arrived before the refused send and was answered after the restart.
	least, most := restarted.Sub(calls[0].At).Seconds(), time.Since(pushed).Seconds()
	if s := lat.GetSampleSum(); s < least || s > most {
		t.Errorf("reply latency %.3fs after a restart, want between %.3fs (refused send to restart) and %.3fs (push to now)", s, least, most)
	}
}

package schedule_test

// The tests here need what only storage's bbolt file does: a reopen and storage's own
// deletions (Forget, ForgetUser). TestOneShotDelayFiresOnceOnTime and
// TestAddTxDuringRescanStillFires run on both stores.

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/storage/storagetest"
)

func TestOneShotDelayFiresOnceOnTime(t *testing.T) {
	t.Parallel()
	t.Run("bbolt", func(t *testing.T) {
		oneShotDelayFiresOnceOnTime(t, storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db")))
	})
	t.Run("memory", func(t *testing.T) { oneShotDelayFiresOnceOnTime(t, storagetest.New()) })
}

func TestSurvivesRestartAndFiresOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	s := schedule.New(st, schedule.Options{})
	item := mustPlan(t, s, ptr[int64](600), nil, nil, now0, time.UTC)
	_ = st.Close()

	st = storagetest.Open(t, path)
	s = schedule.New(st, schedule.Options{})
	items, err := s.List(7)
	if err != nil || len(items) != 1 || items[0].ID != item.ID {
		t.Fatalf("after reopen: %+v, %v", items, err)
	}
	if sigs, _ := s.FireDue(now0.Add(5 * time.Minute)); len(sigs) != 0 {
		t.Fatalf("fired early: %+v", sigs)
	}
	if sigs, _ := s.FireDue(now0.Add(10 * time.Minute)); len(sigs) != 1 {
		t.Fatalf("did not fire: %+v", sigs)
	}
	_ = st.Close()

	st = storagetest.Open(t, path)
	s = schedule.New(st, schedule.Options{})
	if sigs, _ := s.FireDue(now0.Add(time.Hour)); len(sigs) != 0 {
		t.Errorf("fired again after restart: %+v", sigs)
	}
	if p, _ := st.Pending(); len(p) != 1 {
		t.Errorf("inbox = %+v, want the one signal", p)
	}
}

func TestForgetDropsSchedules(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{})
	mustPlan(t, s, ptr[int64](60), nil, nil, now0, time.UTC)
	if err := st.Forget(7); err != nil {
		t.Fatal(err)
	}
	if items, _ := s.List(7); len(items) != 0 {
		t.Errorf("items after forget: %+v", items)
	}
	if sigs, _ := s.FireDue(now0.Add(time.Hour)); len(sigs) != 0 {
		t.Errorf("fired after forget: %+v", sigs)
	}
}

func BenchmarkFireDueIdle(b *testing.B) {
	st := storagetest.Open(b, filepath.Join(b.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{})
	item, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "x", DelaySeconds: ptr[int64](3600), Now: now0, Zone: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Add(item); err != nil {
		b.Fatal(err)
	}
	if _, err := s.FireDue(now0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if sigs, _ := s.FireDue(now0); sigs != nil {
			b.Fatal("fired")
		}
	}
}

// An item added inside a transaction that is still open (AddTx from the core loop's
// commit) while FireDue rescans must still fire when due: the rescan may not drop its due
// time from the idle bound just because the scan could not see the uncommitted item yet.
func TestAddTxDuringRescanStillFires(t *testing.T) {
	t.Parallel()
	t.Run("bbolt", func(t *testing.T) {
		addTxDuringRescanStillFires(t, storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db")))
	})
	t.Run("memory", func(t *testing.T) { addTxDuringRescanStillFires(t, storagetest.New()) })
}

// TestRecountAfterForget: a user's /forget deletes their reminders in the store, behind
// the scheduler; Recount lowers the pending gauge to what is left.
func TestRecountAfterForget(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{Registerer: prometheus.NewRegistry()})
	mustPlan(t, s, ptr[int64](3600), nil, nil, now0, time.UTC)
	mustPlan(t, s, ptr[int64](7200), nil, nil, now0, time.UTC)
	if got := testutil.ToFloat64(s.MetricsPending()); got != 2 {
		t.Fatalf("pending = %v, want 2", got)
	}
	if _, err := st.ForgetUser(70, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Recount(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(s.MetricsPending()); got != 0 {
		t.Errorf("pending after the user's /forget = %v, want 0", got)
	}
}

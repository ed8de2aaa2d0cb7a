package plugins

import (
	"context"
	"fmt"
	"time"
)

// MissedJobGrace is how late a missed daily job may still run at start.
const MissedJobGrace = 12 * time.Hour

// JobLog remembers when each job last ran (keyed "<plugin>/<job>").
type JobLog interface {
	LastRun(key string) (time.Time, bool, error)
	SetLastRun(key string, t time.Time) error
}

// Jobs runs the installed plugins' daily jobs. Step is called with the loop's clock; it is
// not safe for concurrent use (Run calls it from one goroutine).
type Jobs struct {
	set  *Set
	host Host
	log  JobLog
	zone *time.Location
	last map[string]time.Time // job key → the due time it last ran for (or skipped)
}

// NewJobs returns the runner of s's jobs in zone (the users' default zone).
func NewJobs(s *Set, host Host, log JobLog, zone *time.Location) *Jobs {
	if zone == nil {
		zone = time.UTC
	}
	return &Jobs{set: s, host: host, log: log, zone: zone, last: map[string]time.Time{}}
}

// Run steps the jobs every tick of clock until ctx ends.
func (j *Jobs) Run(ctx context.Context, now func() time.Time, tick time.Duration) error {
	if len(j.set.jobs) == 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		j.Step(ctx, now())
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// latest is the latest time at or before now that pj is due (in zone).
func (j *Jobs) latest(pj pluginJob, now time.Time) time.Time {
	l := now.In(j.zone)
	due := time.Date(l.Year(), l.Month(), l.Day(), pj.hour, pj.minute, 0, 0, j.zone)
	if due.After(now) {
		l = l.AddDate(0, 0, -1)
		due = time.Date(l.Year(), l.Month(), l.Day(), pj.hour, pj.minute, 0, 0, j.zone)
	}
	return due
}

// Step runs the jobs due at now, one after the other. A job seen for the first time
// (nothing recorded) counts as done for its latest due time. A due time not yet run for
// runs if it is less than MissedJobGrace old, and is skipped otherwise (anima was down).
func (j *Jobs) Step(ctx context.Context, now time.Time) {
	for _, pj := range j.set.jobs {
		key := pj.plugin + "/" + pj.job.Name
		due := j.latest(pj, now)
		last, ok := j.last[key]
		if !ok {
			var err error
			last, ok, err = j.log.LastRun(key)
			if err != nil {
				j.set.Fail(pj.plugin, PartJob, fmt.Errorf("job %s: read last run: %w", pj.job.Name, err))
				continue
			}
			if !ok {
				last = due // nothing was missed before the job existed
				j.record(pj, key, last)
			}
			j.last[key] = last
		}
		if !last.Before(due) {
			continue
		}
		j.record(pj, key, due)
		if late := now.Sub(due); late >= MissedJobGrace {
			j.set.g.log.Warn("daily job missed while anima was down; skipped", "plugin", pj.plugin, "job", pj.job.Name,
				"due", due, "late", late)
			continue
		}
		j.run(ctx, pj, due)
	}
}

func (j *Jobs) record(pj pluginJob, key string, due time.Time) {
	j.last[key] = due
	if err := j.log.SetLastRun(key, due); err != nil {
		j.set.Fail(pj.plugin, PartJob, fmt.Errorf("job %s: record last run: %w", pj.job.Name, err))
	}
}

func (j *Jobs) run(ctx context.Context, pj pluginJob, due time.Time) {
	defer func() { j.set.g.recovered(pj.plugin, PartJob, recover()) }()
	if err := pj.job.Run(ctx, j.host, due); err != nil {
		j.set.Fail(pj.plugin, PartJob, fmt.Errorf("job %s: %w", pj.job.Name, err))
	}
}

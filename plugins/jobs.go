package plugins

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// MissedJobGrace is how late a missed daily job may still run at start.
const MissedJobGrace = 12 * time.Hour

// zoneRefresh is how often Jobs rereads which time zones the users are in.
const zoneRefresh = time.Minute

// JobLog remembers when each job last ran (keyed "<plugin>/<job>", and
// "<plugin>/<job>@<zone>" for a zone other than the default).
type JobLog interface {
	LastRun(key string) (time.Time, bool, error)
	SetLastRun(key string, t time.Time) error
}

// Jobs runs the installed plugins' daily jobs in each user's own time zone: a job runs at
// its At in every zone some relationship is in (its override, or the default zone), once
// per zone, for the chats in that zone. Step is called with the loop's clock; it is not
// safe for concurrent use (Run calls it from one goroutine).
type Jobs struct {
	set  *Set
	host Host
	log  JobLog
	zone *time.Location
	last map[string]time.Time // job key → the due time it last ran for (or skipped)

	zones     []string // the relationships' zone overrides in use ("" is the default), sorted
	locs      map[string]*time.Location
	refreshed time.Time
}

// NewJobs returns the runner of s's jobs; zone is the users' default zone. host may be
// nil for jobs that need nothing of it (they then run for the default zone, with no chats).
func NewJobs(s *Set, host Host, log JobLog, zone *time.Location) *Jobs {
	if zone == nil {
		zone = time.UTC
	}
	return &Jobs{set: s, host: host, log: log, zone: zone, last: map[string]time.Time{},
		zones: []string{""}, locs: map[string]*time.Location{"": zone}}
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

// latest is the latest time at or before now that pj is due in loc.
func latest(pj pluginJob, now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	due := time.Date(l.Year(), l.Month(), l.Day(), pj.hour, pj.minute, 0, 0, loc)
	if due.After(now) {
		l = l.AddDate(0, 0, -1)
		due = time.Date(l.Year(), l.Month(), l.Day(), pj.hour, pj.minute, 0, 0, loc)
	}
	return due
}

// zoneOf is the name Jobs keys rel's zone by: its override when it is a zone anima knows,
// else "" (the default zone), as brain.State.Location reads it.
func (j *Jobs) zoneOf(rel *brain.Relationship) string {
	if rel.Timezone == "" {
		return ""
	}
	loc, ok := j.locs[rel.Timezone]
	if !ok {
		loc, _ = time.LoadLocation(rel.Timezone) // nil on error: cached, falls back to the default
		j.locs[rel.Timezone] = loc
	}
	if loc == nil {
		return ""
	}
	return rel.Timezone
}

// refresh rereads the zones in use, at most every zoneRefresh.
func (j *Jobs) refresh(now time.Time) {
	if j.host == nil || (!j.refreshed.IsZero() && now.Sub(j.refreshed) < zoneRefresh && !now.Before(j.refreshed)) {
		return
	}
	rels, err := j.host.Chats()
	if err != nil {
		for _, pj := range j.set.jobs {
			j.set.g.fail(pj.plugin, PartJob, fmt.Errorf("job %s: list chats: %w", pj.job.Name, err))
		}
		return
	}
	j.refreshed = now
	zones := []string{""}
	for i := range rels {
		if z := j.zoneOf(&rels[i]); !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	slices.Sort(zones)
	j.zones = zones
}

// Step runs the jobs due at now, one after the other, zone by zone. A job seen for the
// first time in a zone (nothing recorded) counts as done for its latest due time there. A
// due time not yet run for runs if it is less than MissedJobGrace old, and is skipped
// otherwise (anima was down).
func (j *Jobs) Step(ctx context.Context, now time.Time) {
	if len(j.set.jobs) == 0 {
		return
	}
	j.refresh(now)
	for _, pj := range j.set.jobs {
		for _, zone := range j.zones {
			j.step(ctx, pj, zone, now)
		}
	}
}

func (j *Jobs) step(ctx context.Context, pj pluginJob, zone string, now time.Time) {
	key := pj.plugin + "/" + pj.job.Name
	if zone != "" {
		key += "@" + zone
	}
	due := latest(pj, now, j.locs[zone])
	last, ok := j.last[key]
	if !ok {
		var err error
		last, ok, err = j.log.LastRun(key)
		if err != nil {
			j.set.g.fail(pj.plugin, PartJob, fmt.Errorf("job %s: read last run: %w", pj.job.Name, err))
			return
		}
		if !ok {
			last = due // nothing was missed before the job (or the zone) existed
			j.record(pj, key, last)
		}
		j.last[key] = last
	}
	if !last.Before(due) {
		return
	}
	j.record(pj, key, due)
	if late := now.Sub(due); late >= MissedJobGrace {
		j.set.g.log.Warn("daily job missed while anima was down; skipped", "plugin", pj.plugin, "job", pj.job.Name,
			"zone", j.locs[zone].String(), "due", due, "late", late)
		return
	}
	chats, err := j.chats(zone)
	if err != nil {
		j.set.g.fail(pj.plugin, PartJob, fmt.Errorf("job %s: list chats: %w", pj.job.Name, err))
		return
	}
	j.run(ctx, pj, due, chats)
}

// chats are the relationships in zone, as last saved.
func (j *Jobs) chats(zone string) ([]brain.Relationship, error) {
	if j.host == nil {
		return nil, nil
	}
	rels, err := j.host.Chats()
	if err != nil {
		return nil, err
	}
	var in []brain.Relationship
	for i := range rels {
		if j.zoneOf(&rels[i]) == zone {
			in = append(in, rels[i])
		}
	}
	return in, nil
}

func (j *Jobs) record(pj pluginJob, key string, due time.Time) {
	j.last[key] = due
	if err := j.log.SetLastRun(key, due); err != nil {
		j.set.g.fail(pj.plugin, PartJob, fmt.Errorf("job %s: record last run: %w", pj.job.Name, err))
	}
}

func (j *Jobs) run(ctx context.Context, pj pluginJob, due time.Time, chats []brain.Relationship) {
	defer func() { j.set.g.recovered(pj.plugin, PartJob, recover()) }()
	if err := pj.job.Run(ctx, j.host, due, chats); err != nil {
		j.set.g.fail(pj.plugin, PartJob, fmt.Errorf("job %s: %w", pj.job.Name, err))
	}
}

package brain_test

import (
	"testing"

	"github.com/anima-bot/anima/brain"
)

// pluginIntent is an intent of a kind the core does not know.
type pluginIntent struct{}

func (pluginIntent) IntentName() string { return "plugin_thing" }

func TestHomeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   brain.Intent
		want brain.Home
	}{
		{brain.SendMessage{}, brain.InTurn},
		{brain.Schedule{}, brain.InTurn},
		{brain.CancelSchedule{}, brain.InTurn},
		{brain.Remember{}, brain.InTurn},
		{brain.NoteState{}, brain.InTurn},
		{brain.Defer{}, brain.InLoop},
		{brain.Ack{}, brain.InLoop},
		{brain.EmitThought{}, brain.InLoop},
		{brain.SetTimezone{}, brain.InLoop},
		{brain.UpdateState{}, brain.InLoop},
		{pluginIntent{}, 0},
		{nil, 0},
	}
	for _, tc := range tests {
		name := "nil"
		if tc.in != nil {
			name = tc.in.IntentName()
		}
		t.Run(name, func(t *testing.T) {
			if got := brain.HomeOf(tc.in); got != tc.want {
				t.Errorf("HomeOf(%T) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

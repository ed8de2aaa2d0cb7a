// Package deploy holds what runs anima outside `go run`: the systemd unit (systemd/), the
// monitoring stack (compose.yaml, prometheus/, grafana/). It has no code; its tests check
// that the files agree with each other and with the repository.
package deploy

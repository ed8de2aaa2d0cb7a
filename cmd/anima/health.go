package main

import (
	"context"
	"fmt"
	"io"

	"github.com/anima-bot/anima/bot"
)

// healthCommand is `anima health`: exit 0 if the running instance's /readyz (at
// metrics.listen) answers 200 within --timeout (the container health check).
func healthCommand(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	cfg, ok := loadConfig(*f.config, stderr)
	if !ok {
		return 1
	}
	if err := bot.Health(ctx, cfg.Metrics.Listen, *f.timeout); err != nil {
		fmt.Fprintf(stderr, "anima health: %s\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "ready")
	return 0
}

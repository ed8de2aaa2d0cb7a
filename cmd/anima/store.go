package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/anima-bot/anima/bot"
)

// backupCommand is `anima backup --out F`: a hot copy of the store while the service runs.
func backupCommand(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	if *f.out == "" {
		fmt.Fprintln(stderr, "anima backup: --out FILE is required")
		return 2
	}
	cfg, ok := loadConfig(*f.config, stderr)
	if !ok {
		return 1
	}
	start := time.Now()
	n, err := bot.Backup(ctx, cfg.Storage.Path, *f.out)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, %v)\n", cfg.Storage.Path, *f.out, n, time.Since(start).Round(time.Millisecond))
	return 0
}

// compactCommand is `anima compact`: a stopped service's store rewritten without the
// space (and the bytes) of deleted data.
func compactCommand(f *cmdFlags, stdout, stderr io.Writer) int {
	cfg, ok := loadConfig(*f.config, stderr)
	if !ok {
		return 1
	}
	rep, err := bot.Compact(cfg.Storage.Path)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "compacted %s: %d → %d bytes (%v)\n", cfg.Storage.Path, rep.Before, rep.After, rep.Took.Round(time.Millisecond))
	return 0
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/anima-bot/anima/storage"
)

// Targets of a start with a large store (a 100,000-message store built by cmd/soak).
const (
	targetStoreStart = time.Second
	targetStoreRSS   = 48 << 20 // bytes (MiB)
	// storeUser is the user (and private chat) the soak gives every other message.
	storeUser = int64(1)
)

// storedStart measures lt.o.starts starts of anima on a copy of the store lt.o.store:
// exec → first getUpdates, RSS (mapped store pages included) once it arrived, and the
// answer to a message in the store's largest chat, with RSS after it.
func (lt *loadtest) storedStart(ctx context.Context) error {
	st, err := os.Stat(lt.o.store)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	lt.printf("1. start with the store %s (%s; a copy each start; user %d writes once it polls)\n", lt.o.store, mb(st.Size()), storeUser)
	var starts []time.Duration
	var worst int64
	for i := range lt.o.starts {
		d, rss, err := lt.storedOnce(ctx, i)
		if err != nil {
			return err
		}
		starts = append(starts, d)
		worst = max(worst, rss)
	}
	med := median(starts)
	lt.judge("stored start → getUpdates", ms(med), "≤ "+ms(targetStoreStart), med <= targetStoreStart)
	lt.judge("stored start VmRSS (max)", fmt.Sprintf("%.1f MiB", float64(worst)/(1<<20)), "≤ 48 MiB after its first answer", worst <= targetStoreRSS)
	return nil
}

func (lt *loadtest) storedOnce(ctx context.Context, i int) (time.Duration, int64, error) {
	name := fmt.Sprintf("stored-%d", i+1)
	dir := filepath.Join(lt.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, fmt.Errorf("mkdir: %w", err)
	}
	db := filepath.Join(dir, "anima.db")
	if err := copyFile(lt.o.store, db); err != nil {
		return 0, 0, fmt.Errorf("copy store: %w", err)
	}
	offset, err := storedOffset(db)
	if err != nil {
		return 0, 0, err
	}
	f, err := newFakes()
	if err != nil {
		return 0, 0, err
	}
	defer f.close()
	f.tg.SkipUpdateIDs(offset) // updates below the stored offset count as confirmed
	p, err := lt.launch(ctx, f, name, []int64{storeUser})
	if err != nil {
		return 0, 0, err
	}
	defer p.kill()
	d := f.tg.Polls()[0].At.Sub(p.started)
	atPoll, err := readMemory(p.pid())
	if err != nil {
		return 0, 0, err
	}
	wctx, cancel := p.watch(ctx)
	defer cancel()
	sent := time.Now()
	f.tg.PushText(storeUser, storeUser, "do you remember what we talked about last spring?")
	if err := lt.awaitReply(wctx, f.tg, storeUser); err != nil {
		return 0, 0, lt.procErr(p, wctx, err)
	}
	answered := time.Since(sent)
	after, err := readMemory(p.pid())
	if err != nil {
		return 0, 0, err
	}
	took, err := p.stop()
	if err != nil {
		return 0, 0, lt.procErr(p, ctx, err)
	}
	lt.printf("   start %d  getUpdates at %-9s VmRSS %s (file-backed %s); answered in %s, then VmRSS %s (file-backed %s, peak %s); SIGTERM → exit 0 in %s\n",
		i+1, ms(d), mib(atPoll.RSS), mib(atPoll.FileMap), ms(answered), mib(after.RSS), mib(after.FileMap), mib(after.HWM), ms(took))
	return d, max(atPoll.RSS, after.RSS), nil
}

// storedOffset reads the Telegram offset a store will poll from.
func storedOffset(path string) (int64, error) {
	st, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("open store copy: %w", err)
	}
	defer st.Close()
	return st.Offset("telegram")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// mib formats bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

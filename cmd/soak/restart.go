package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// startup runs the probe in a fresh process, three times after a clean stop, then once
// after a crash (a process that committed and exited without closing the store), and
// prints its reports.
func startup(path string, opts storage.Options, w io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"-startup-probe", path}
	if opts.SyncFreelist {
		args = append(args, "-sync-freelist")
	}
	for i := range 4 {
		if i == 3 {
			crashArgs := []string{"-crash-store", path}
			if opts.SyncFreelist {
				crashArgs = append(crashArgs, "-sync-freelist")
			}
			if out, err := exec.Command(exe, crashArgs...).CombinedOutput(); err != nil {
				return fmt.Errorf("crash: %w: %s", err, out)
			}
			fmt.Fprint(w, "after a crash: ")
		}
		out, err := exec.Command(exe, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("startup probe: %w: %s", err, out)
		}
		fmt.Fprint(w, string(out))
	}
	return nil
}

// crash opens the store, commits once and exits without closing it, as a killed anima
// leaves it.
func crash(path string, opts storage.Options, stderr io.Writer) int {
	st, err := storage.Open(path, opts)
	if err != nil {
		fmt.Fprintf(stderr, "crash: %v\n", err)
		return 1
	}
	if err := st.Put(storage.BucketState, []byte("soak-crash"), time.Now()); err != nil {
		fmt.Fprintf(stderr, "crash: %v\n", err)
		return 1
	}
	os.Exit(0) // no Close
	return 0
}

// probe opens the store as anima's start-up does before its first getUpdates (the
// outbox, the inbox, relationships, acks, the offset), then runs the first turn's
// Recall, and reports the time taken and the process's memory.
func probe(path string, opts storage.Options, stdout, stderr io.Writer) int {
	t := time.Now()
	st, err := storage.Open(path, opts)
	if err != nil {
		fmt.Fprintf(stderr, "probe: %v\n", err)
		return 1
	}
	defer func() { _ = st.Close() }()
	mem, err := memory.New(st, nil, memory.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "probe: %v\n", err)
		return 1
	}
	_, err1 := st.PendingOutbox()
	_, err2 := st.Pending()
	_, err3 := st.Relationships()
	_, err4 := st.Acks()
	_, err5 := st.Offset("telegram")
	if err := firstErr(err1, err2, err3, err4, err5); err != nil {
		fmt.Fprintf(stderr, "probe: %v\n", err)
		return 1
	}
	ready := time.Since(t)
	query := "kalomi renor sa velis tuan peradon, anis mota gufi elar: the lumtor and the wesyar"
	if _, err := mem.Recall(context.Background(), 1, 1, query, 0); err != nil {
		fmt.Fprintf(stderr, "probe: %v\n", err)
		return 1
	}
	recalled := time.Since(t)
	rss, hwm := memKiB()
	fmt.Fprintf(stdout, "start-up: store open and read for getUpdates %s ms, first Recall done %s ms, VmRSS %.1f MiB, VmHWM %.1f MiB\n",
		ms(ready), ms(recalled), float64(rss)/1024, float64(hwm)/1024)
	return 0
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

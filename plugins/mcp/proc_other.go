//go:build !linux

package mcp

// readStat fails: without /proc no process group is recorded, and none is reaped.
func readStat(int) (procStat, error) { return procStat{}, errNoProc }

func listProcs() ([]procStat, error) { return nil, errNoProc }

func bootID() string { return "" }

func ownedBy(int, int) bool { return false }

// readRecord reads nothing: no process group is recorded here.
func readRecord(string, int64) ([]byte, error) { return nil, errNoProc }

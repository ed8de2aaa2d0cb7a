//go:build !linux

package mcp

// readStat fails: without /proc no process group is recorded, and none is reaped.
func readStat(int) (procStat, error) { return procStat{}, errNoProc }

func listProcs() ([]procStat, error) { return nil, errNoProc }

func bootID() string { return "" }

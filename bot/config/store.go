package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// ResolveStore makes a relative storage.path (written in the file, from
// $ANIMA_STORAGE_PATH or the default ./data/anima.db) relative to the folder of the
// configuration file at file, so that every command finds the same store wherever it is
// run from. A store kept where the old meaning put it, relative to the working
// directory, keeps working: when that file exists and the new place holds none, the old
// one is used, and warning says both paths and what to do. The path is unchanged when it
// is absolute, when file is "" (a configuration not read from a file) or when both
// meanings are one place.
func (c *Config) ResolveStore(file string) (warning string) {
	p := c.Storage.Path
	if p == "" || filepath.IsAbs(p) || file == "" {
		return ""
	}
	beside := filepath.Join(filepath.Dir(file), p)
	if filepath.Clean(beside) == filepath.Clean(p) {
		return ""
	}
	c.Storage.Path = beside
	if _, err := os.Stat(beside); err == nil {
		return ""
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		c.Storage.Path = p
		wd, _ := os.Getwd()
		return fmt.Sprintf("storage.path %q is taken relative to the configuration's folder now, which makes it %s, "+
			"but the store is at %s (relative to the working directory %s, as before): using %s; "+
			"move it to %s, or set storage.path to %s, so that every command finds it from any folder",
			p, beside, p, wd, p, beside, absOr(p))
	}
	return ""
}

// absOr is path made absolute, or path when that fails.
func absOr(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

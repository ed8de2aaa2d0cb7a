//go:build !unix

package storage

import (
	"fmt"
	"io/fs"
)

const sentLogFlags = 0

func isSymlinkErr(error) bool { return false }

// trustSentLog refuses only what is not a regular file: there is no owner to check here.
func trustSentLog(st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file (%s)", errSentLogRefused, st.Mode().Type())
	}
	return nil
}

package claimcheck

import "os"

// SetSync replaces the Dir's fsyncs of the temporary file and of the
// directory, to fail a Put or look at it half-way.
func SetSync(d *Dir, file, dir func(*os.File) error) {
	if file != nil {
		d.syncFile = file
	}
	if dir != nil {
		d.syncDir = dir
	}
}

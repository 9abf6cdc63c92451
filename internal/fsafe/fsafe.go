package fsafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Open opens name for reading and refuses anything but a regular file.
func Open(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := CheckRegular(name, fi); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a regular file (see Open).
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(f)
}

// CheckRegular returns an error naming the kind of file unless fi is a
// regular file.
func CheckRegular(name string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a folder"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m&fs.ModeSymlink != 0:
		kind = "a symlink"
	}
	return fmt.Errorf("%s is %s, not a regular file: capirepo reads only regular files and folders; replace it with the file it stands for", name, kind)
}

// WriteFileAtomic writes data to name through a temporary file in the same
// folder (.NAME.tmp-*, removed on failure) and a rename, so a reader sees the
// old file or the new one. The file is synced before the rename and made
// readable by everyone (0644), as a config or manifest file is.
func WriteFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// AppendFile appends data to name in one write, creating it; a file that
// is there and no regular file (a FIFO that would block, a device) is
// refused before it is opened.
func AppendFile(name string, data []byte) error {
	if fi, err := os.Stat(name); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is no regular file (%s)", name, fi.Mode().Type())
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// CleanAtomicLeftovers removes the temporary files WriteFileAtomic leaves
// beside each of names in dir when a run is killed (.NAME.tmp-*). Call it
// only while no other run can be writing there (under the folder's lock).
func CleanAtomicLeftovers(dir string, names ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		for _, n := range names {
			if strings.HasPrefix(e.Name(), "."+n+".tmp-") && e.Type().IsRegular() {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// CheckEntry returns an error naming dir/NAME, what it is and why it is not
// read, unless the folder entry is a regular file: a release folder is read
// file by file, and a symlink (which could name any file on the machine) or
// a FIFO (which blocks a reader for ever) is refused, not skipped, so the
// user hears of it instead of a release that seems to lack the file.
func CheckEntry(dir string, e fs.DirEntry) error {
	if e.Type().IsRegular() {
		return nil
	}
	name := filepath.Join(dir, e.Name())
	fi, err := e.Info()
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		to, err := os.Readlink(name)
		if err != nil {
			return err
		}
		where := ""
		abs := to
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, to)
		}
		if rel, err := filepath.Rel(dir, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			where = ", out of " + dir
		}
		return fmt.Errorf("%s is a symlink (to %s%s), not a regular file: capirepo reads only regular files from a release folder and does not follow links; replace it with the file it stands for", name, to, where)
	}
	return CheckRegular(name, fi)
}

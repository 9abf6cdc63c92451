// Package fsafe opens files capirepo reads from a provider tree so that a
// special file (a FIFO, a device, a socket) where a regular file is expected
// is refused, naming the path, instead of blocking the run for ever: the
// file is opened without blocking and checked with fstat before any read.
// It also writes single files so that a reader sees the old file or the new
// one, never a part (WriteFileAtomic; CleanAtomicLeftovers removes what a
// killed write left), and appends to one in a single write, refusing a
// special file there (AppendFile: a CI job summary).
//
// It is not the builder's confinement to the tree (symlinks, size limits,
// remote bases): it only makes one open or one write safe.
package fsafe

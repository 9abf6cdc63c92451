// Package dirlock is the one lock every capirepo writer takes on an output
// root (a dist folder, a local repository tree, an overrides folder, a dev
// repository): an advisory, exclusive lock on ROOT/.capirepo.lock, held by
// the kernel for the open file (flock on Unix, LockFileEx on Windows), so it
// is released when the process ends, however it ends. The file is removed
// when the lock is released, so a run leaves nothing of it behind (a run
// that is killed leaves the file, which the next one takes over).
//
// A second writer waits, says once whom it waits for, and gives up after
// the timeout. While a writer holds the lock no other capirepo writes below
// the root, so anything left in a staging folder there is a leftover of a
// run that is gone and may be removed.
//
// It is not for readers, which take no lock, nor for anything outside
// capirepo: other tools writing below a root are not kept out.
package dirlock

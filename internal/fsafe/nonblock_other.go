//go:build !unix

package fsafe

// nonblock is 0 where FIFOs do not block an open (Windows has none in the
// file system).
const nonblock = 0

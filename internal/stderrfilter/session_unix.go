//go:build unix

package stderrfilter

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// readSize is at least a pipe's capacity (64 KiB on Linux and macOS unless
// raised, 1 MiB at most by default on Linux), so one read takes all the
// pipe holds and a message written in one write of at most PIPE_BUF bytes
// (atomic) arrives whole in one chunk: never split between two reads.
const readSize = 1 << 20

// session is one interception of descriptor 2: from the first hold to the
// last release.
type session struct {
	savedFd  int      // a copy of the original descriptor 2
	saved    *os.File // owns savedFd
	w        *os.File // the pipe's write end (also on descriptor 2 until stop)
	sentinel []byte   // written by stop: everything before it was written while held
	done     chan struct{}
	lost     bool // the forwarder stopped before the sentinel (a failed read)
}

func start(drop [][]byte) (*session, error) {
	savedFd, err := unix.FcntlInt(2, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	saved := os.NewFile(uintptr(savedFd), "/dev/stderr")
	r, w, err := os.Pipe()
	if err != nil {
		_ = saved.Close()
		return nil, err
	}
	// Whoever writes to descriptor 2 (os.Stderr, C code, a child process)
	// expects it to block when full, as a terminal or file does: Fd puts
	// the write end back in blocking mode (os.Pipe made it non-blocking).
	wfd := int(w.Fd())
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	s := &session{savedFd: savedFd, saved: saved, w: w, done: make(chan struct{}),
		sentinel: []byte("\x00stderrfilter " + hex.EncodeToString(token) + "\x00")}
	if err := unix.Dup2(wfd, 2); err != nil {
		_, _, _ = r.Close(), w.Close(), saved.Close()
		return nil, err
	}
	// A crash while descriptor 2 is the pipe would write its trace where
	// nobody reads any more: the runtime writes it to the real one too.
	_ = debug.SetCrashOutput(saved, debug.CrashOptions{})
	go s.forward(r, drop)
	return s, nil
}

// forward passes what arrives on the pipe to the saved descriptor, without
// the dropped messages, until the sentinel; after it, whatever a process
// that inherited the pipe still writes is passed on as it is, until the end.
func (s *session) forward(r *os.File, drop [][]byte) {
	defer func() { _ = r.Close() }() // the read end: nothing was written through it
	buf := make([]byte, readSize)
	held := true
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		if held && n > 0 {
			rest := []byte(nil)
			if i := bytes.Index(chunk, s.sentinel); i >= 0 {
				chunk, rest = chunk[:i], chunk[i+len(s.sentinel):]
			}
			if out := dropAll(chunk, drop); len(out) > 0 {
				_, _ = s.saved.Write(out)
			}
			if rest != nil {
				held = false
				close(s.done)
				chunk = rest
			} else {
				chunk = nil
			}
		}
		if len(chunk) > 0 {
			_, _ = s.saved.Write(chunk)
		}
		if err != nil {
			break
		}
	}
	if held {
		s.lost = true
		close(s.done)
		return // stop still needs savedFd; it closes it
	}
	_ = s.saved.Close()
}

// stop puts the original descriptor 2 back and returns once everything
// written to the pipe before has been passed on.
func (s *session) stop() {
	_ = unix.Dup2(s.savedFd, 2)
	_ = debug.SetCrashOutput(nil, debug.CrashOptions{})
	_, _ = s.w.Write(s.sentinel)
	_ = s.w.Close()
	<-s.done
	if s.lost {
		_ = s.saved.Close()
	}
}

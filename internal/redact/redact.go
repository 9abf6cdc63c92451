package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret in output.
const Mask = "[REDACTED]"

// MinLen is the shortest value taken for a secret: shorter ones ("", "x")
// would mask ordinary words and protect nothing.
const MinLen = 4

// Set is a set of secrets. The zero Set is empty and ready; it is safe for
// concurrent use.
type Set struct {
	mu      sync.RWMutex
	secrets []string // every form, longest first
}

// Add adds secrets, with the forms they take once escaped into a URL or a
// JSON string, so an echoed request or a JSON summary is covered too.
func (s *Set) Add(secrets ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < MinLen {
			continue
		}
		forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
		if j, err := json.Marshal(v); err == nil {
			forms = append(forms, string(j[1:len(j)-1]))
		}
		for _, f := range forms {
			if !slices.Contains(s.secrets, f) {
				s.secrets = append(s.secrets, f)
			}
		}
	}
	// Longest first: a secret that contains another is masked whole.
	slices.SortStableFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
}

// AddURL adds the password (and the whole user:password) of a URL's
// userinfo. It reports whether the URL had userinfo.
func (s *Set) AddURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return false
	}
	if p, ok := u.User.Password(); ok {
		s.Add(p, u.User.String())
	} else {
		// https://TOKEN@host: the user name is the secret.
		s.Add(u.User.Username())
	}
	return true
}

// String returns s with every secret masked.
func (s *Set) String(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.secrets {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}

// Error returns err with its message masked; errors.Is and As still see
// the original.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maxLen is the longest secret, for the Writer's hold-back.
func (s *Set) maxLen() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.secrets) == 0 {
		return 0
	}
	return len(s.secrets[0])
}

// heldPrefix returns how many bytes at the end of b could be the start of a
// secret that the next write completes.
func (s *Set) heldPrefix(b []byte) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	best := 0
	for _, v := range s.secrets {
		for n := min(len(v)-1, len(b)); n > best; n-- {
			if bytes.HasSuffix(b, []byte(v[:n])) {
				best = n
				break
			}
		}
	}
	return best
}

// Writer masks every secret in what is written to w. A secret split across
// two writes is masked too: the bytes that could start one are held until
// the next write or Flush. Call Flush when done.
type Writer struct {
	set  *Set
	w    io.Writer
	mu   sync.Mutex
	held []byte
}

// NewWriter returns a Writer that masks set's secrets on their way to w.
func NewWriter(w io.Writer, set *Set) *Writer { return &Writer{set: set, w: w} }

// Write masks and writes p. It reports len(p) when the masked text was
// written, whatever its length.
func (m *Writer) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	buf := append(m.held, p...)
	m.held = nil
	if m.set.maxLen() == 0 {
		if _, err := m.w.Write(buf); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	text := m.set.String(string(buf))
	keep := m.set.heldPrefix([]byte(text))
	out := text[:len(text)-keep]
	m.held = []byte(text[len(text)-keep:])
	if len(out) > 0 {
		if _, err := io.WriteString(m.w, out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held back.
func (m *Writer) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.held) == 0 {
		return nil
	}
	_, err := m.w.Write(m.held)
	m.held = nil
	return err
}

// Unwrap returns the wrapped writer (to tell whether it is a terminal).
func (m *Writer) Unwrap() io.Writer { return m.w }

type ctxKey struct{}

// NewContext returns ctx carrying set.
func NewContext(ctx context.Context, set *Set) context.Context {
	return context.WithValue(ctx, ctxKey{}, set)
}

// FromContext returns the Set in ctx, or nil (on which Add and String are
// no-ops).
func FromContext(ctx context.Context) *Set {
	s, _ := ctx.Value(ctxKey{}).(*Set)
	return s
}

// Add adds secrets to the Set in ctx, if any.
func Add(ctx context.Context, secrets ...string) { FromContext(ctx).Add(secrets...) }

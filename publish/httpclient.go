package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/capirepo/capirepo/internal/option"
)

// Waits every request of capirepo is bounded by (HTTPOptions).
const (
	// DefaultTimeout bounds each wait for a server: the reply's headers,
	// and any pause while a body is sent or read (--timeout).
	DefaultTimeout = time.Minute
	// MaxConnectTimeout bounds connecting and the TLS handshake.
	MaxConnectTimeout = 30 * time.Second
	// DefaultWaitNotice is how long a stall lasts before it is reported.
	DefaultWaitNotice = 5 * time.Second
	// WaitBudgetFactor times the timeout is all one request may spend
	// waiting, its retries included (see Retry): the server's silence in
	// every attempt and the pauses between attempts.
	WaitBudgetFactor = 2
	// TransferTimeFactor times the timeout is the longest one reply's body
	// may take to read, however steadily it arrives: a server that streams
	// without end, or a byte at a time, is cut off.
	TransferTimeFactor = 10
	// MaxReplySize bounds the body of one reply read through capirepo's
	// clients where nothing smaller is known: the readers cap each file at
	// the size its target lists (a GitHub or GitLab asset's size, an OCI
	// descriptor's) with ReadLimit.
	MaxReplySize = 512 << 20
)

type readLimitKey struct{}

type readLimit struct {
	what  string
	limit int64
}

// ReadLimit returns ctx for requests whose successful (2xx) reply bodies
// may hold at most limit bytes (the size the target listed for the file);
// what names the file in the error. A body that goes on is cut off with a
// TooLargeError instead of being read into memory. Every request made with
// ctx gets the limit: give it only to the download of that one file (not
// to a client that first fetches a token with it).
func ReadLimit(ctx context.Context, what string, limit int64) context.Context {
	return context.WithValue(ctx, readLimitKey{}, readLimit{what: what, limit: max(limit, 0)})
}

// LimitedReadAll reads r to its end, at most limit bytes: more is a
// TooLargeError naming what. A reader's own bound, whatever client it was
// given.
func LimitedReadAll(r io.Reader, what string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit}
	}
	return data, nil
}

// TooLargeError says a reply went on past the size the target listed for
// it (or MaxReplySize). It is final: the same server would send the same.
type TooLargeError struct {
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Limit == MaxReplySize {
		return fmt.Sprintf("%s: the reply goes on past %d bytes, capirepo's most for one reply: stopped reading", e.What, e.Limit)
	}
	return fmt.Sprintf("%s: the server sends more than the %d bytes it lists for it: stopped reading (a broken or hostile server)", e.What, e.Limit)
}

// TransferTimeoutError says a reply's body took longer than its bound to
// arrive, though it kept moving.
type TransferTimeoutError struct {
	What  string
	After time.Duration
}

func (e *TransferTimeoutError) Error() string {
	return fmt.Sprintf("%s: the reply was still arriving after %s (%d times %s): stopped reading", e.What, e.After, TransferTimeFactor, option.Timeout)
}

// HTTPOptions say how long a request may wait and whom to tell.
type HTTPOptions struct {
	// Timeout bounds each wait: connecting and the TLS handshake (at most
	// MaxConnectTimeout), the reply's headers, and any pause in sending or
	// reading a body. It is not a bound on a whole transfer: a large upload
	// on a slow link lasts as long as it keeps moving. Within a Retry, all
	// attempts of one request together wait at most WaitBudgetFactor times
	// it. 0 means DefaultTimeout.
	Timeout time.Duration
	// WaitNotice is how long a request makes no progress before Progress is
	// told what it waits for; 0 means DefaultWaitNotice.
	WaitNotice time.Duration
	// Progress receives the waiting lines; nil says nothing.
	Progress io.Writer
}

// NewHTTPClient returns the client publishers use: every wait bounded as
// HTTPOptions says, no total timeout. A stalled request fails with a
// TimeoutError, which the retry policy retries.
func NewHTTPClient(o HTTPOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.WaitNotice <= 0 {
		o.WaitNotice = DefaultWaitNotice
	}
	connect := min(o.Timeout, MaxConnectTimeout)
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok { // replaced (a test's fake): the watchdog alone bounds the waits
		return &http.Client{Transport: &watchdog{next: http.DefaultTransport, o: o}}
	}
	t := base.Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	// The watchdog below gives up on a silent server after o.Timeout with a
	// TimeoutError the retry policy retries. The transport's own header
	// timeout is only a backstop behind it: its error matches
	// context.DeadlineExceeded, which the policy takes for the caller's
	// deadline and does not retry, so it must never fire first.
	t.ResponseHeaderTimeout = 2*o.Timeout + time.Second
	t.ExpectContinueTimeout = time.Second
	return &http.Client{Transport: &watchdog{next: t, o: o}}
}

// Bounded returns next with the waits of hc, a client NewHTTPClient made
// (nil, or another client: the default waits), for a library that makes its
// requests through a transport capirepo does not create, such as
// clusterctl's repository clients on http.DefaultTransport.
func Bounded(next http.RoundTripper, hc *http.Client) http.RoundTripper {
	var o HTTPOptions
	if hc != nil {
		for t := hc.Transport; t != nil; {
			switch w := t.(type) {
			case *watchdog:
				o, t = w.o, nil
			case *credentialGuard:
				t = w.next
			default:
				t = nil
			}
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.WaitNotice <= 0 {
		o.WaitNotice = DefaultWaitNotice
	}
	return &watchdog{next: next, o: o}
}

// TimeoutError says a server sent or took nothing for the whole timeout.
type TimeoutError struct {
	Host string
	// After is the timeout that passed without progress.
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s sent nothing for %s (raise %s if the server is just slow)", e.Host, e.After, option.Timeout)
}

// Timeout marks the error as a timeout (net.Error), so it is retried.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary is part of net.Error.
func (e *TimeoutError) Temporary() bool { return true }

var _ net.Error = (*TimeoutError)(nil)

// watchdog cancels a request that makes no progress (no byte of its body
// sent, no header or byte of the reply received) for the timeout, and says
// what it waits for once it has waited WaitNotice.
type watchdog struct {
	next http.RoundTripper
	o    HTTPOptions
	mu   sync.Mutex // serialises Progress
}

func (d *watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watch{d: d, host: req.URL.Host, cancel: cancel, start: time.Now(), bound: d.o.Timeout}
	// Within a Retry, the attempts share one budget of waiting, twice the
	// timeout: this attempt's silence may take what is left of it.
	if b := budgetFrom(req.Context()); b != nil {
		b.size(WaitBudgetFactor * d.o.Timeout)
		if left, ok := b.left(); ok {
			w.bound, w.budget = max(min(w.bound, left), time.Millisecond), b
		}
	}
	w.last = w.start
	// Under the lock: a timer may fire before the other is assigned.
	w.mu.Lock()
	w.timer = time.AfterFunc(w.bound, w.expire)
	w.notice = time.AfterFunc(d.o.WaitNotice, w.notify)
	w.mu.Unlock()
	r := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		r.Body = &watchedBody{rc: req.Body, w: w, request: true}
	}
	resp, err := d.next.RoundTrip(r)
	if err != nil {
		w.done()
		if w.expired() {
			return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: &TimeoutError{Host: w.host, After: w.bound}}
		}
		return nil, err
	}
	w.touch()
	what := req.URL.Host + req.URL.Path
	limit := int64(MaxReplySize)
	if l, ok := req.Context().Value(readLimitKey{}).(readLimit); ok && resp.StatusCode < 300 {
		what, limit = l.what, l.limit
	}
	w.mu.Lock()
	w.what, w.limit = what, limit
	if !w.over {
		w.transfer = time.AfterFunc(TransferTimeFactor*d.o.Timeout, w.tooSlow)
	}
	w.mu.Unlock()
	resp.Body = &watchedBody{rc: resp.Body, w: w}
	return resp, nil
}

type watch struct {
	d      *watchdog
	host   string
	cancel context.CancelCauseFunc
	// bound is how long this request may go without progress: the
	// timeout, or less when the retry budget has less left.
	bound  time.Duration
	budget *waitBudget // nil outside a Retry

	mu            sync.Mutex
	start, last   time.Time
	timer, notice *time.Timer
	fired, over   bool
	// The reply's body: what it is, how much of it may come and came, and
	// the bound on reading it all.
	what          string
	limit, read   int64
	transfer      *time.Timer
	slow, tooMuch bool
}

// tooSlow cuts off a reply that is still arriving at its bound.
func (w *watch) tooSlow() {
	w.mu.Lock()
	if w.over {
		w.mu.Unlock()
		return
	}
	w.slow, w.over = true, true
	w.timer.Stop()
	w.notice.Stop()
	w.mu.Unlock()
	w.cancel(&TransferTimeoutError{What: w.what, After: TransferTimeFactor * w.d.o.Timeout})
}

// count adds n bytes of the reply and cuts it off past its limit.
func (w *watch) count(n int) error {
	w.mu.Lock()
	w.read += int64(n)
	if w.read <= w.limit {
		w.mu.Unlock()
		return nil
	}
	err := &TooLargeError{What: w.what, Limit: w.limit}
	w.tooMuch = true
	w.mu.Unlock()
	w.done()
	return err
}

// stopped is the error of a reply the watch cut off, or nil.
func (w *watch) stopped() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.slow:
		return &TransferTimeoutError{What: w.what, After: TransferTimeFactor * w.d.o.Timeout}
	case w.tooMuch:
		return &TooLargeError{What: w.what, Limit: w.limit}
	}
	return nil
}

func (w *watch) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return
	}
	w.last = time.Now()
	w.timer.Reset(w.bound)
	w.notice.Reset(w.d.o.WaitNotice)
}

func (w *watch) expire() {
	w.mu.Lock()
	if w.over {
		w.mu.Unlock()
		return
	}
	w.fired, w.over = true, true
	w.notice.Stop()
	w.mu.Unlock()
	if w.budget != nil {
		w.budget.spend(w.bound)
	}
	w.cancel(&TimeoutError{Host: w.host, After: w.bound})
}

func (w *watch) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func (w *watch) notify() {
	w.mu.Lock()
	if w.over || w.d.o.Progress == nil {
		w.mu.Unlock()
		return
	}
	waited := time.Since(w.last).Round(time.Second)
	w.mu.Unlock()
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	fmt.Fprintf(w.d.o.Progress, "waiting for %s (%s without an answer; gives up after %s)...\n", w.host, waited, w.bound)
}

// done stops the timers and releases the request's context.
func (w *watch) done() {
	w.mu.Lock()
	w.over = true
	w.timer.Stop()
	w.notice.Stop()
	if w.transfer != nil {
		w.transfer.Stop()
	}
	w.mu.Unlock()
	w.cancel(nil)
}

// watchedBody reports progress on every read and turns the watchdog's
// cancellation into a TimeoutError.
type watchedBody struct {
	rc      io.ReadCloser
	w       *watch
	request bool // the request's body: the reply has not come yet
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if !b.request {
		if err := b.w.stopped(); err != nil {
			return 0, err
		}
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.touch()
		if !b.request {
			if cerr := b.w.count(n); cerr != nil {
				return 0, cerr
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if serr := b.w.stopped(); serr != nil && !b.request {
			return n, serr
		}
		if b.w.expired() {
			return n, &TimeoutError{Host: b.w.host, After: b.w.bound}
		}
	}
	if errors.Is(err, io.EOF) && !b.request {
		b.w.done()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	if !b.request {
		defer b.w.done()
	}
	return b.rc.Close()
}

// credentialHeaders are the headers that carry a credential of capirepo's:
// the standard one, and GitLab's own, which Go's client does not know and
// so copies to any host a redirect names.
var credentialHeaders = []string{"Authorization", "Private-Token", "Job-Token", "Deploy-Token", "Cookie"}

// GuardCredentials returns a copy of hc (nil: a new client) that sends
// credentials only to the trusted origins (scheme, host and port of each URL
// given): a request to any other origin, as a redirect may name, goes out
// without its Authorization, PRIVATE-TOKEN, JOB-TOKEN and Cookie headers and
// without URL userinfo. This holds whatever added the header (the client
// library's own transport, or a header copied by a redirect), since the
// guard sits below them all, just above the network.
func GuardCredentials(hc *http.Client, trusted ...string) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	g := &credentialGuard{next: next, trusted: map[string]bool{}}
	for _, t := range trusted {
		if u, err := url.Parse(t); err == nil && u.Host != "" {
			g.trusted[origin(u)] = true
		}
	}
	c.Transport = g
	return c
}

type credentialGuard struct {
	next    http.RoundTripper
	trusted map[string]bool
}

func (g *credentialGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.trusted[origin(req.URL)] {
		return g.next.RoundTrip(req)
	}
	strip := req.URL.User != nil
	for _, h := range credentialHeaders {
		if req.Header.Get(h) != "" {
			strip = true
		}
	}
	if strip {
		req = req.Clone(req.Context())
		req.URL.User = nil
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return g.next.RoundTrip(req)
}

// origin is scheme://host:port with the scheme's default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

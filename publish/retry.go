package publish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/capirepo/capirepo/internal/option"
)

// Retry is the one retry policy for every network call of this package.
// Transient failures (dropped connections, timeouts, 5xx, 429, secondary
// rate limits) are retried with capped exponential backoff; when the server
// says how long to wait (Retry-After, a rate-limit reset) that wait is used
// instead. Anything else fails at once.
//
// The zero Retry is usable: zero fields take DefaultRetry's values, except
// Jitter, which stays 0 (no randomisation) so tests see exact waits.
type Retry struct {
	// Attempts is the total number of tries, the first included.
	Attempts int
	// Initial is the first backoff wait; each next one is twice as long,
	// up to Max.
	Initial time.Duration
	Max     time.Duration
	// Jitter randomises each backoff wait by up to ±Jitter (0 to 1).
	Jitter float64
	// MaxWait caps a wait the server asks for. A longer one fails with an
	// error that says when to try again instead of blocking for hours.
	MaxWait time.Duration
	// Sleep waits for d or until ctx is done. Tests record instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock, for rate-limit resets given as a time.
	Now func() time.Time
	// Notify, when set, is told about each failed attempt that will be retried.
	Notify func(attempt int, err error, wait time.Duration)
}

// DefaultRetry returns the policy publishers use unless told otherwise:
// 6 attempts, waits of 1s, 2s, 4s, ... capped at 30s with ±25% jitter, and
// server-requested waits of up to 10 minutes.
func DefaultRetry() Retry {
	return Retry{
		Attempts: 6,
		Initial:  time.Second,
		Max:      30 * time.Second,
		Jitter:   0.25,
		MaxWait:  10 * time.Minute,
		Sleep:    SleepContext,
		Now:      time.Now,
	}
}

// SleepContext waits for d or until ctx is done, whichever comes first.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// WithDefaults fills the zero fields of r from DefaultRetry.
func (r Retry) WithDefaults() Retry {
	d := DefaultRetry()
	if r.Attempts <= 0 {
		r.Attempts = d.Attempts
	}
	if r.Initial <= 0 {
		r.Initial = d.Initial
	}
	if r.Max <= 0 {
		r.Max = d.Max
	}
	if r.MaxWait <= 0 {
		r.MaxWait = d.MaxWait
	}
	if r.Sleep == nil {
		r.Sleep = d.Sleep
	}
	if r.Now == nil {
		r.Now = d.Now
	}
	return r
}

// waitBudget is what one request, all its attempts together, may spend
// waiting: the server's silence (an attempt that timed out spends its whole
// bound) and the pauses between attempts. The HTTP client's watchdog sizes
// it on the first attempt at WaitBudgetFactor times its timeout, so the
// retry loop and the client share one bound a user can tell from
// --timeout. A wait the server asks for (Retry-After, a rate limit) is not
// counted: MaxWait bounds it.
type waitBudget struct {
	mu           sync.Mutex
	total, spent time.Duration // total 0: no watchdog saw the request
}

type budgetKey struct{}

func budgetFrom(ctx context.Context) *waitBudget {
	b, _ := ctx.Value(budgetKey{}).(*waitBudget)
	return b
}

// size sets the budget on the first attempt; later ones keep it.
func (b *waitBudget) size(total time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total == 0 {
		b.total = total
	}
}

// left is what remains; ok is false while the size is unknown.
func (b *waitBudget) left() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total - b.spent, b.total > 0
}

func (b *waitBudget) spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += d
}

// Do runs op until it succeeds, fails permanently, the attempts are used
// up, or the request has waited twice the HTTP client's timeout in all. op must start from scratch on every call (re-open the file, rewind the
// bytes): a failed attempt may have sent part of a body.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error) error {
	_, err := DoValue(ctx, r, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) })
	return err
}

// DoValue is Do for an operation that returns a value.
func DoValue[T any](ctx context.Context, r Retry, op func(ctx context.Context) (T, error)) (T, error) {
	r = r.WithDefaults()
	b := &backoff.ExponentialBackOff{
		InitialInterval:     r.Initial,
		RandomizationFactor: r.Jitter,
		Multiplier:          2,
		MaxInterval:         r.Max,
	}
	b.Reset()
	budget := budgetFrom(ctx)
	if budget == nil { // an op that retries inside another's shares its budget
		budget = &waitBudget{}
		ctx = context.WithValue(ctx, budgetKey{}, budget)
	}
	for attempt := 1; ; attempt++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		if cerr := context.Cause(ctx); cerr != nil && ctx.Err() != nil {
			return v, fmt.Errorf("%w (stopped: %w)", err, cerr)
		}
		retry, after := IsRetriable(err)
		if !retry {
			var perm *backoff.PermanentError
			if errors.As(err, &perm) {
				return v, perm.Err
			}
			return v, err
		}
		if attempt >= r.Attempts {
			return v, fmt.Errorf("%w (gave up after %s; try again later)", err, attempts(attempt))
		}
		wait := b.NextBackOff()
		if after > 0 {
			if after > r.MaxWait {
				return v, fmt.Errorf("%w (the server asks to wait %s, longer than the %s limit: try again after %s)",
					err, after.Round(time.Second), r.MaxWait, r.Now().Add(after).Format(time.RFC3339))
			}
			wait = after
		} else if left, ok := budget.left(); ok && wait >= left {
			return v, fmt.Errorf("%w (gave up after %s: one request waits at most %s in all, %d times %s)",
				err, attempts(attempt), budget.total.Round(time.Millisecond), WaitBudgetFactor, option.Flag(ctx, option.Timeout))
		}
		if r.Notify != nil {
			r.Notify(attempt, err, wait)
		}
		if serr := r.Sleep(ctx, wait); serr != nil {
			return v, fmt.Errorf("%w (stopped while waiting to retry: %w)", err, serr)
		}
		if after == 0 {
			budget.spend(wait)
		}
	}
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// retriableError marks an error as transient, with an optional wait.
type retriableError struct {
	err   error
	after time.Duration
}

func (e *retriableError) Error() string { return e.err.Error() }
func (e *retriableError) Unwrap() error { return e.err }

// Retriable marks err as transient. after > 0 is the wait the server asked for.
func Retriable(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &retriableError{err: err, after: after}
}

// Permanent marks err as final: Do returns it at once.
func Permanent(err error) error { return backoff.Permanent(err) }

// StatusError is an HTTP reply an SDK turned into an error. Publishers
// convert their SDK's errors into one (see StatusErrorFrom) so the policy
// does not depend on any SDK.
type StatusError struct {
	Status int
	// RetryAfter is the wait the server asked for, 0 when it did not say.
	RetryAfter time.Duration
	// RateLimited is true for primary and secondary rate limits.
	RateLimited bool
	Err         error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// StatusErrorFrom builds a StatusError from a reply's status and headers:
// it reads Retry-After (seconds or an HTTP date) and, when the remaining
// request count is 0, X-RateLimit-Reset or RateLimit-Reset (a Unix time, or
// seconds from now when small).
func StatusErrorFrom(status int, h http.Header, now time.Time, err error) *StatusError {
	e := &StatusError{Status: status, Err: err}
	e.RetryAfter = RetryAfterHeader(h, now)
	remaining := firstHeader(h, "X-RateLimit-Remaining", "RateLimit-Remaining")
	if remaining == "0" {
		e.RateLimited = true
		if e.RetryAfter == 0 {
			e.RetryAfter = RateLimitReset(firstHeader(h, "X-RateLimit-Reset", "RateLimit-Reset"), now)
		}
	}
	if status == http.StatusTooManyRequests {
		e.RateLimited = true
	}
	return e
}

// RetryAfterHeader returns the wait a Retry-After header asks for, 0 if none.
func RetryAfterHeader(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// RateLimitReset turns a rate-limit reset into a wait. GitHub sends a Unix time;
// some servers send seconds from now.
func RateLimitReset(v string, now time.Time) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	if n < 1_000_000_000 {
		return time.Duration(n) * time.Second
	}
	return UntilReset(time.Unix(n, 0), now)
}

// UntilReset is the wait until a rate-limit reset, plus a second because
// the reset is rounded down to the second.
func UntilReset(reset, now time.Time) time.Duration {
	d := reset.Sub(now)
	if d <= 0 {
		return time.Second
	}
	return d + time.Second
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// IsRetriable reports whether err is transient, and the wait the server
// asked for (0 when it did not say).
func IsRetriable(err error) (bool, time.Duration) {
	if err == nil {
		return false, 0
	}
	var perm *backoff.PermanentError
	if errors.As(err, &perm) {
		return false, 0
	}
	var re *retriableError
	if errors.As(err, &re) {
		return true, re.after
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, 0
	}
	var se *StatusError
	if errors.As(err, &se) {
		switch {
		case se.Status >= 500, se.Status == http.StatusTooManyRequests, se.Status == http.StatusRequestTimeout:
			return true, se.RetryAfter
		case se.Status == http.StatusForbidden && (se.RateLimited || se.RetryAfter > 0):
			return true, se.RetryAfter
		}
		return false, 0
	}
	return isNetworkTransient(err), 0
}

// isNetworkTransient reports whether err is a connection failure worth
// another try: a reset or dropped connection, a timeout, an EOF mid-reply.
// Certificate errors and unknown hosts are not: retrying cannot fix them.
func isNetworkTransient(err error) bool {
	var cert *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostname x509.HostnameError
	if errors.As(err, &cert) || errors.As(err, &unknownAuth) || errors.As(err, &hostname) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return !dns.IsNotFound
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection reset", "broken pipe", "REFUSED_STREAM", "GOAWAY", "unexpected EOF", "server closed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Hint adds advice to an error a server answered with a status (a
// StatusError): advice returns what a person can do about that status, ""
// for none. Other errors are returned as they are.
func Hint(err error, advice func(se *StatusError) string) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	if a := advice(se); a != "" {
		return fmt.Errorf("%w: %s", err, a)
	}
	return err
}

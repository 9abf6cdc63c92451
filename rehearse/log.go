package rehearse

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
)

// clusterctl logs through one logger for the whole process
// (cmd/clusterctl/log.Log, silent unless set), so one rehearsal at a time
// hears it.
var hearing sync.Mutex

// retryLevel is the verbosity clusterctl logs each retry at, with its
// cause: the only place a refusal it retries is said before it gives up.
const retryLevel = 5

// clusterctlLog is what clusterctl said during a rehearsal: its steps
// (Installing, Scaling down, Deleting, ...) and the cause of its last
// retry.
type clusterctlLog struct {
	w io.Writer

	mu        sync.Mutex
	events    []event
	lastRetry string
	// retries counts the retries in a row with lastRetry's cause; stop,
	// when set, is called once they show the API server refusing.
	retries int
	stop    func(error)
}

// event is one line of clusterctl's log.
type event struct {
	msg string
	kv  map[string]string
}

// hear makes clusterctl's log this one until restore is called.
func (l *clusterctlLog) hear() (restore func()) {
	hearing.Lock()
	prev := logf.Log
	logf.SetLogger(logr.New(&sink{l: l}))
	return func() {
		logf.SetLogger(prev)
		hearing.Unlock()
	}
}

// saw says whether clusterctl logged msg with every given key and value.
func (l *clusterctlLog) saw(msg string, kv map[string]string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.msg != msg {
			continue
		}
		all := true
		for k, v := range kv {
			all = all && e.kv[k] == v
		}
		if all {
			return true
		}
	}
	return false
}

// refusedRetries is how many times in a row clusterctl tries an object
// the API server refuses before the rehearsal stops it: a refusal (422,
// 403) is the server's answer to the object, which clusterctl's retries
// (about 2.5 minutes of them) do not change.
const refusedRetries = 4

// refusal says whether a cause clusterctl retries is the API server
// refusing the object (apierrors' words for 422 Invalid and 403 Forbidden,
// or an admission webhook's denial) rather than a passing condition.
func refusal(cause string) bool {
	return strings.Contains(cause, " is invalid: ") || strings.Contains(cause, " is forbidden: ") || strings.Contains(cause, "denied the request")
}

// RefusedError is the API server's refusal of an object clusterctl kept
// retrying, which the rehearsal stopped.
type RefusedError struct {
	// Cause is clusterctl's words for its last try; Tries how many it made.
	Cause string
	Tries int
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s (clusterctl retries this for %s before it gives up; stopped after %d tries, the server's answer unchanged)", e.Cause, clusterctlRetries, e.Tries)
}

// stopOnRefusal calls stop when clusterctl retries an object the API
// server refuses (refusedRetries times in a row); done stops watching.
func (l *clusterctlLog) stopOnRefusal(stop func(error)) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop, l.retries = stop, 0
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.stop = nil
	}
}

// retried is the cause of clusterctl's last retry ("" when none).
func (l *clusterctlLog) retried() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastRetry
}

func (l *clusterctlLog) record(level int, msg string, kv []any) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		// clusterctl logs some values by pointer (providerVersion).
		if v := reflect.ValueOf(kv[i+1]); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.String {
			kv[i+1] = v.Elem().Interface()
		}
		m[fmt.Sprint(kv[i])] = fmt.Sprint(kv[i+1])
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if level >= retryLevel {
		if msg == "Retrying with backoff" {
			if m["cause"] != l.lastRetry {
				l.retries = 0
			}
			l.lastRetry = m["cause"]
			l.retries++
			if l.stop != nil && l.retries >= refusedRetries && refusal(l.lastRetry) {
				l.stop(&RefusedError{Cause: l.lastRetry, Tries: l.retries})
				l.stop = nil
			}
		}
		return
	}
	l.events = append(l.events, event{msg: msg, kv: m})
	if level == 0 {
		var b strings.Builder
		b.WriteString("  clusterctl: " + msg)
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
		}
		fmt.Fprintln(l.w, b.String())
	}
}

// sink is the logr sink clusterctl's logger writes to.
type sink struct {
	l      *clusterctlLog
	values []any
}

func (s *sink) Init(logr.RuntimeInfo)  {}
func (s *sink) Enabled(level int) bool { return level <= retryLevel }
func (s *sink) Info(level int, msg string, kv ...any) {
	s.l.record(level, msg, append(append([]any{}, s.values...), kv...))
}

func (s *sink) Error(err error, msg string, kv ...any) {
	s.l.record(0, msg, append(append([]any{}, s.values...), append(kv, "error", err)...))
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	return &sink{l: s.l, values: append(append([]any{}, s.values...), kv...)}
}
func (s *sink) WithName(string) logr.LogSink { return s }

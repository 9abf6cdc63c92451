// Command manager is the controller manager of the example Cluster API
// infrastructure provider. It only does what capirepo needs to show a real
// provider release: it parses the flags a controller-runtime manager takes,
// reports its build information and serves health probes until it is told to
// stop. A real provider would start its reconcilers and webhooks here.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version string
	commit  string
	date    string
)

type options struct {
	namespace              string
	leaderElect            bool
	metricsBindAddress     string
	healthProbeBindAddress string
	webhookPort            int
	verbosity              int
	showVersion            bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.StringVar(&o.namespace, "namespace", "",
		`Namespace that the controller watches to reconcile objects. If empty (or "", the default the components give clusterctl), the controller watches all namespaces.`)
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Enable leader election for the controller manager, ensuring only one active manager.")
	fs.StringVar(&o.metricsBindAddress, "metrics-bind-address", ":8443",
		"The address the metrics endpoint binds to. Use 0 to disable it.")
	fs.StringVar(&o.healthProbeBindAddress, "health-probe-bind-address", ":9440",
		"The address the health and readiness probes bind to.")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443,
		"The port the webhook server listens on.")
	fs.IntVar(&o.verbosity, "v", 0, "Log verbosity; higher is more detailed.")
	fs.BoolVar(&o.showVersion, "version", false, "Print the version and exit.")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.namespace == `""` {
		o.namespace = ""
	}
	if o.webhookPort < 1 || o.webhookPort > 65535 {
		return o, fmt.Errorf("--webhook-port %d is not a valid port", o.webhookPort)
	}
	return o, nil
}

func versionString() string {
	v, c, d := version, commit, date
	if v == "" {
		v = "dev"
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("capi-example-controller %s (commit %s, built %s)", v, c, d)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if o.showVersion {
		fmt.Println(versionString())
		return
	}

	level := slog.LevelInfo
	if o.verbosity > 0 {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	log.Info("starting manager", "version", versionString(),
		"namespace", o.namespace, "leaderElect", o.leaderElect,
		"metricsBindAddress", o.metricsBindAddress, "webhookPort", o.webhookPort)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := serveProbes(ctx, o.healthProbeBindAddress); err != nil {
		log.Error("health probe server failed", "error", err)
		os.Exit(1)
	}
	log.Info("manager stopped")
}

// serveProbes answers /healthz and /readyz until ctx is done.
func serveProbes(ctx context.Context, addr string) error {
	ok := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", ok)
	mux.HandleFunc("GET /readyz", ok)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kbroker/kbroker/config"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exit codes: 2 for a command line we cannot read, 1 for everything that
// stops the broker after that (bad configuration included).
const (
	exitFailure = 1
	exitUsage   = 2
)

const usage = "usage: kbroker server.properties [--override key=value ...]\n       kbroker audit --bootstrap-server host:port (docs/replica-audit.md)"

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "audit" {
		return runAudit(args[1:], os.Stdout, stderr)
	}
	path, overrides, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "kbroker: %v\n%s\n", err, usage)
		return exitUsage
	}
	logger, levelErr := newLogger(stderr)
	if levelErr != nil {
		logger.Warn("KBROKER_LOG_LEVEL ignored", "err", levelErr)
	}
	cfg, warnings, err := config.Load(path, overrides)
	for _, w := range warnings {
		logger.Warn(w)
	}
	if err != nil {
		logger.Error("configuration refused", "err", err)
		return exitFailure
	}
	if cfg.PprofEnable && cfg.MetricsListener == "" {
		logger.Warn("pprof.enable=true has no effect without metrics.listener")
	}

	ctx, stop := shutdownContext(logger)
	defer stop()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.MetricsListener != "" {
		srv, err := serveMetrics(cfg, reg, logger)
		if err != nil {
			logger.Error("metrics listener", "addr", cfg.MetricsListener, "err", err)
			return exitFailure
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}

	if err := runBroker(ctx, cfg, reg, logger); err != nil {
		logger.Error("broker stopped", "err", err)
		return exitFailure
	}
	logger.Info("broker shut down")
	return 0
}

// parseArgs accepts the config file and any number of "--override k=v" or
// "--override=k=v", in any order, as kafka-server-start.sh does.
func parseArgs(args []string) (path string, overrides []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--override" || a == "-override":
			if i+1 >= len(args) {
				return "", nil, errors.New("--override needs key=value")
			}
			i++
			overrides = append(overrides, args[i])
		case strings.HasPrefix(a, "--override="):
			overrides = append(overrides, strings.TrimPrefix(a, "--override="))
		case strings.HasPrefix(a, "-"):
			return "", nil, fmt.Errorf("unknown flag %s", a)
		case path == "":
			path = a
		default:
			return "", nil, fmt.Errorf("unexpected argument %s", a)
		}
	}
	if path == "" {
		return "", nil, errors.New("no configuration file")
	}
	for _, o := range overrides {
		if k, _, ok := strings.Cut(o, "="); !ok || strings.TrimSpace(k) == "" {
			return "", nil, fmt.Errorf("override %q is not key=value", o)
		}
	}
	return path, overrides, nil
}

// newLogger writes text logs to w at the level named by KBROKER_LOG_LEVEL
// (debug, info, warn, error; default info).
func newLogger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	var err error
	if v := os.Getenv("KBROKER_LOG_LEVEL"); v != "" {
		if err = level.UnmarshalText([]byte(v)); err != nil {
			level = slog.LevelInfo
		}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), err
}

// shutdownContext is cancelled by the first SIGTERM or SIGINT, which starts
// a controlled shutdown; a second signal means the operator will not wait,
// so the process exits at once.
func shutdownContext(logger *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			logger.Info("shutting down", "signal", s.String())
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			logger.Warn("second signal, exiting now", "signal", s.String())
			os.Exit(exitFailure)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// serveMetrics binds metrics.listener before the broker starts, so a port
// clash stops start-up instead of going unnoticed.
func serveMetrics(cfg *config.Config, reg *prometheus.Registry, logger *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", cfg.MetricsListener)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	if cfg.PprofEnable {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "err", err)
		}
	}()
	logger.Info("serving metrics", "addr", ln.Addr().String(), "pprof", cfg.PprofEnable)
	return srv, nil
}

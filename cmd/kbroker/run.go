package main

import (
	"context"
	"log/slog"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/server"
	"github.com/prometheus/client_golang/prometheus"
)

// runBroker is the whole of main's wiring to package server: it returns
// once ctx is cancelled and the broker has shut down.
func runBroker(ctx context.Context, cfg *config.Config, reg *prometheus.Registry, logger *slog.Logger) error {
	b, err := server.New(cfg, reg, logger)
	if err != nil {
		return err
	}
	return b.Run(ctx)
}

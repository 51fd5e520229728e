package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// healthcheckTimeout bounds the whole probe: a container runtime calls it
// every few seconds and a hung probe must not pile up.
const healthcheckTimeout = 3 * time.Second

// healthcheckCommand asks a running server's /healthz and fails unless it
// answers 200. The container image has no shell or curl, so its HEALTHCHECK
// runs this.
func healthcheckCommand(ctx context.Context, e env) error {
	fs := newFlagSet(e, "healthcheck", "healthcheck [--addr HOST:PORT]\n\nExits 0 when the server at addr answers /healthz with 200.")
	addr := fs.String("addr", cmp.Or(e.getenv(envFlag("addr")), ":8080"), "the server's listen address (env SIRTOMMY_ADDR)")
	if _, err := parseInterspersed(fs, e.args); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return usagef("healthcheck: bad --addr %q: %v", *addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: /healthz answered %s", resp.Status)
	}
	fmt.Fprintln(e.stdout, "ok")
	return nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	rpprof "runtime/pprof"

	"github.com/rs/zerolog"
)

// servePprof serves the runtime profiles (net/http/pprof) on addr, on a
// listener of their own so that they are never reachable through the
// service's port, and returns the function that stops it.
func servePprof(addr string, log zerolog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn().Err(err).Msg("pprof server")
		}
	}()
	log.Info().Str("addr", ln.Addr().String()).Msg("pprof listening")
	return func() { _ = hs.Close() }, nil
}

// startCPUProfile profiles this process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := rpprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { rpprof.StopCPUProfile(); f.Close() }, nil
}

// writeAllocProfile writes the allocations made so far to path; a failure
// is only reported, the run's figures stand.
func writeAllocProfile(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = rpprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "sirtommy: alloc profile:", err)
	}
}

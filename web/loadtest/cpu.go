package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// cpuMetric is the process collector's CPU counter, user plus system
// seconds, which both the race server and the echo server publish.
const cpuMetric = "process_cpu_seconds_total"

// MetricsURL is the /metrics address of the server whose websocket is
// wsURL: same host and port, http for ws and https for wss.
func MetricsURL(wsURL string) (string, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("%q is not a ws:// or wss:// URL", wsURL)
	}
	u.Path, u.RawQuery, u.Fragment = "/metrics", "", ""
	return u.String(), nil
}

// CPUSeconds reads the CPU seconds a server process has used so far from
// its /metrics, as the kernel counts them for that process alone: the
// figure that makes two servers' costs comparable in one run.
func CPUSeconds(ctx context.Context, metricsURL string) (float64, error) {
	v, err := readMetrics(ctx, metricsURL, cpuMetric)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// The Go collector's memory gauges: heap spans in use and goroutine stacks.
const (
	heapInUseMetric  = "go_memstats_heap_inuse_bytes"
	stackInUseMetric = "go_memstats_stack_inuse_bytes"
)

// Memory is what a Go server's /metrics says it holds: heap spans in use
// and goroutine stacks, in bytes, and its goroutines.
type Memory struct {
	Heap       float64 `json:"heapInUseBytes"`
	Stacks     float64 `json:"stackInUseBytes"`
	Goroutines float64 `json:"goroutines"`
}

// MemoryInUse reads a Go server's Memory from its /metrics.
func MemoryInUse(ctx context.Context, metricsURL string) (Memory, error) {
	v, err := readMetrics(ctx, metricsURL, heapInUseMetric, stackInUseMetric, "go_goroutines")
	if err != nil {
		return Memory{}, err
	}
	return Memory{Heap: v[0], Stacks: v[1], Goroutines: v[2]}, nil
}

// readMetrics reads the named single-series counters or gauges from a
// /metrics page, in the order asked.
func readMetrics(ctx context.Context, metricsURL string, names ...string) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", metricsURL, res.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metricsURL, err)
	}
	out := make([]float64, len(names))
	for i, name := range names {
		f, ok := families[name]
		if !ok || len(f.GetMetric()) != 1 {
			return nil, fmt.Errorf("%s has no %s", metricsURL, name)
		}
		m := f.GetMetric()[0]
		switch {
		case m.GetCounter() != nil:
			out[i] = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			out[i] = m.GetGauge().GetValue()
		default:
			return nil, fmt.Errorf("%s: %s is neither a counter nor a gauge", metricsURL, name)
		}
	}
	return out, nil
}

// ForceGC asks a server's pprof endpoint (its --pprof address,
// http://HOST:PORT) for a heap profile after a garbage collection, so that
// the memory read next is what is live, not garbage not yet collected.
func ForceGC(ctx context.Context, pprofURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(pprofURL, "/")+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", req.URL, res.Status)
	}
	return nil
}

// MachineLoad is the one-minute load average of this machine (Linux), the
// figure that says how busy the cores were while a run measured them.
func MachineLoad() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), " ")
	return strconv.ParseFloat(first, 64)
}

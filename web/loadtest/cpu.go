package loadtest

import (
	"context"
	"fmt"
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", metricsURL, res.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", metricsURL, err)
	}
	f, ok := families[cpuMetric]
	if !ok || len(f.GetMetric()) != 1 {
		return 0, fmt.Errorf("%s has no %s", metricsURL, cpuMetric)
	}
	return f.GetMetric()[0].GetCounter().GetValue(), nil
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

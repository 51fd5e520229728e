package loadtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"sirtommy/web/loadtest"
	"sirtommy/web/metrics"
)

func TestMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"ws://127.0.0.1:8080/ws":       "http://127.0.0.1:8080/metrics",
		"wss://example.test/ws?x=1":    "https://example.test/metrics",
		"ws://[::1]:9000/":             "http://[::1]:9000/metrics",
		"http://127.0.0.1:8080/ws":     "",
		"ws://bad host:80/ws":          "",
		"ws://localhost:8090/any/path": "http://localhost:8090/metrics",
	} {
		got, err := loadtest.MetricsURL(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("MetricsURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestCPUSeconds reads the CPU counter from a page that has it, finds it
// on the server's real metrics page, and refuses a page without it.
func TestCPUSeconds(t *testing.T) {
	fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n# TYPE go_goroutines gauge\ngo_goroutines 7")
	}))
	defer fixed.Close()
	if s, err := loadtest.CPUSeconds(context.Background(), fixed.URL); err != nil || s != 12.5 {
		t.Errorf("CPUSeconds = %v, %v; want 12.5", s, err)
	}
	ts := httptest.NewServer(metrics.New().Handler())
	defer ts.Close()
	if s, err := loadtest.CPUSeconds(context.Background(), ts.URL); err != nil || s < 0 {
		t.Fatalf("CPUSeconds of the server's metrics = %v, %v", s, err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# TYPE something_else counter\nsomething_else 3")
	}))
	defer other.Close()
	if _, err := loadtest.CPUSeconds(context.Background(), other.URL); err == nil {
		t.Error("a page without process_cpu_seconds_total was read as a CPU figure")
	}
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	if _, err := loadtest.CPUSeconds(context.Background(), missing.URL); err == nil {
		t.Error("a 404 was read as a CPU figure")
	}
}

// TestMemoryInUse reads the heap, stack and goroutine gauges of the
// server's real metrics page, and refuses a page without them.
func TestMemoryInUse(t *testing.T) {
	ts := httptest.NewServer(metrics.New().Handler())
	defer ts.Close()
	m, err := loadtest.MemoryInUse(context.Background(), ts.URL)
	if err != nil || m.Heap <= 0 || m.Stacks <= 0 || m.Goroutines < 1 {
		t.Fatalf("MemoryInUse of the server's metrics = %+v, %v", m, err)
	}
	cpuOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5")
	}))
	defer cpuOnly.Close()
	if _, err := loadtest.MemoryInUse(context.Background(), cpuOnly.URL); err == nil {
		t.Error("a page without the memory gauges was read as memory")
	}
}

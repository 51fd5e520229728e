package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"sirtommy/race"
)

// leaseWatch follows every race's lease from Redis's own MONITOR feed
// (the commands the lease scripts run, with Redis's clock), and counts
// the takeovers that must never happen: a lease set for another instance
// while the owner's was still live, and a lease set for a race whose
// record said it was over. It knows nothing of the servers' code, so
// it judges any implementation alike.
type leaseWatch struct {
	conn net.Conn
	wg   sync.WaitGroup

	mu     sync.Mutex
	leases map[string]*leaseLog // by race id
	// Takeovers are the leases set for another instance once the one
	// before had lapsed (expired or released): the legitimate ones.
	takeovers int
	// live lists the takeovers of a live lease, finished those of a
	// finished race, each as a line for the report.
	live, finished []string
}

// leaseLog is one race's lease as the watch has seen it.
type leaseLog struct {
	owner string
	until float64 // Redis time, in seconds
	// over is set once the race's record (saved whole at every change)
	// says it is finished or aborted.
	over bool
}

// leaseMargin is how close (in seconds) to a lease's end a new owner's
// claim is not counted as taking a live lease: Redis's clock reads at
// microseconds and a script sees the time it started at.
const leaseMargin = 0.01

// watchLeases starts following the Redis at addr until the test ends.
func watchLeases(t *testing.T, addr string) *leaseWatch {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	w := &leaseWatch{conn: c, leases: make(map[string]*leaseLog)}
	if _, err := c.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReaderSize(c, 1<<16)
	if l, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(l, "+OK") {
		t.Fatalf("MONITOR: %q %v", l, err)
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			w.line(strings.TrimSuffix(l, "\r\n"))
		}
	}()
	t.Cleanup(func() { _ = c.Close(); w.wg.Wait() })
	return w
}

// line reads one MONITOR line: `+1700000000.123456 [0 lua] "SET" "key" ...`.
func (w *leaseWatch) line(l string) {
	if !strings.Contains(l, "}:owner\"") && !strings.Contains(l, "}:meta\"") {
		return
	}
	ts, rest, ok := strings.Cut(strings.TrimPrefix(l, "+"), " ")
	if !ok {
		return
	}
	at, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return
	}
	if _, rest, ok = strings.Cut(rest, "] "); !ok {
		return
	}
	args := monitorArgs(rest)
	if len(args) < 2 {
		return
	}
	cmd, key := strings.ToUpper(args[0]), args[1]
	id, what, ok := raceKey(key)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lg := w.leases[id]
	if lg == nil {
		lg = &leaseLog{}
		w.leases[id] = lg
	}
	switch {
	case what == "meta" && cmd == "SET" && len(args) >= 3:
		var rec struct{ State race.State }
		if json.Unmarshal([]byte(args[2]), &rec) == nil && rec.State.Over() {
			lg.over = true
		}
	case what != "owner":
	case cmd == "SET" && len(args) >= 3:
		owner, ttl := args[2], 0.0
		for i := 3; i+1 < len(args); i++ {
			if strings.EqualFold(args[i], "PX") {
				ms, _ := strconv.ParseFloat(args[i+1], 64)
				ttl = ms / 1000
			}
		}
		switch {
		case lg.owner == owner:
		case lg.over:
			w.finished = append(w.finished, fmt.Sprintf("race %s: lease set for %s after its record said it was over", id, owner))
		case lg.owner != "" && at < lg.until-leaseMargin:
			w.live = append(w.live, fmt.Sprintf("race %s: lease set for %s while %s's had %.3f s left", id, owner, lg.owner, lg.until-at))
		case lg.owner != "" || lg.until > 0:
			w.takeovers++
		}
		lg.owner, lg.until = owner, at+ttl
	case cmd == "PEXPIRE" && len(args) >= 3:
		ms, _ := strconv.ParseFloat(args[2], 64)
		lg.until = at + ms/1000
	case cmd == "DEL":
		lg.owner = "" // released or handed over: until stays, to tell a later claim from the first
	}
}

// monitorArgs splits MONITOR's quoted arguments.
func monitorArgs(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if !strings.HasPrefix(s, `"`) {
			return out
		}
		end := 1
		for end < len(s) && s[end] != '"' {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(s) {
			return out
		}
		a, err := strconv.Unquote(s[:end+1])
		if err != nil {
			a = s[1:end]
		}
		out = append(out, a)
		s = s[end+1:]
	}
}

// raceKey parses "PREFIX{race:ID}:what".
func raceKey(key string) (id, what string, ok bool) {
	_, rest, ok := strings.Cut(key, "{race:")
	if !ok {
		return "", "", false
	}
	id, what, ok = strings.Cut(rest, "}:")
	return id, what, ok
}

// counts returns the watch's figures so far.
func (w *leaseWatch) counts() (takeovers int, live, finished []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.takeovers, append([]string(nil), w.live...), append([]string(nil), w.finished...)
}

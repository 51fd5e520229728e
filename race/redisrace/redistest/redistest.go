// Package redistest starts a real redis-server for tests: on a free port,
// in a temporary directory, killed at the test's cleanup. Where no
// redis-server is on the PATH the test is skipped with a message saying so,
// unless SIRTOMMY_REQUIRE_REDIS=1 is set, when it fails.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv names the environment variable that turns a missing
// redis-server from a skip into a failure (CI sets it).
const RequireEnv = "SIRTOMMY_REQUIRE_REDIS"

// Timeouts of the helper; none is asserted on, they only keep a broken
// redis-server from hanging a test.
const (
	// startTimeout bounds the wait for the first PONG.
	startTimeout = 10 * time.Second
	// pollInterval is the pause between PINGs while redis-server starts.
	pollInterval = 10 * time.Millisecond
	// stopTimeout bounds the wait for redis-server to exit after SIGTERM
	// before it is killed.
	stopTimeout = 5 * time.Second
)

// Options change how the server runs.
//
// Cluster makes it a Redis Cluster node (StartCluster).
type Options struct {
	// AppendOnly turns on the append-only file (fsync always), so that
	// Restart keeps the data.
	AppendOnly bool
	// Cluster starts the server with cluster mode on (a node of
	// StartCluster's cluster).
	Cluster bool
}

// Server is a running redis-server.
type Server struct {
	t    testing.TB
	dir  string
	port int
	opts Options

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start runs redis-server on a free port in t.TempDir() and stops it at
// cleanup. It skips (or fails, with SIRTOMMY_REQUIRE_REDIS=1) when
// redis-server is not installed.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	need(t, "redis-server")
	s := &Server{t: t, dir: t.TempDir(), opts: opts}
	s.port = freePort(t)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// Addr is "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is "redis://127.0.0.1:PORT/0".
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

func (s *Server) start() {
	s.t.Helper()
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--daemonize", "no",
		"--loglevel", "warning",
	}
	if s.opts.Cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
	}
	if s.opts.AppendOnly {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	cmd := exec.Command("redis-server", args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for {
		if err := ping(s.Addr()); err == nil {
			return
		} else if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("redis-server on %s did not answer PING: %v", s.Addr(), err)
		}
		time.Sleep(pollInterval)
	}
}

// Stop terminates the server (SIGTERM, then SIGKILL) and waits for it. It
// may be called more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart stops the server and starts it again on the same port and
// directory (with AppendOnly the data survives).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// StartAgain starts a stopped server again on the same port and directory.
func (s *Server) StartAgain() {
	s.t.Helper()
	s.start()
}

// ping sends PING in RESP and waits for +PONG.
func ping(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if !strings.HasPrefix(line, "+PONG") {
		return errors.New("answer " + strings.TrimSpace(line))
	}
	return nil
}

// freePort asks the kernel for a free TCP port on the loopback.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Client opens a go-redis client on the server, closed at t's cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// CommandCalls is the server's count of calls of each command since it
// started or the last CONFIG RESETSTAT (INFO commandstats), by command
// name in lower case ("publish", "subscribe").
func (s *Server) CommandCalls(t testing.TB) map[string]int {
	t.Helper()
	info, err := s.Client(t).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
		calls[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return calls
}

// need skips t (or fails it, with SIRTOMMY_REQUIRE_REDIS=1) when the
// program is not on the PATH.
func need(t testing.TB, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s is not on the PATH and %s=1: %v", program, RequireEnv, err)
		}
		t.Skipf("%s is not on the PATH: skipping a test that needs a real Redis (set %s=1 to fail instead)", program, RequireEnv)
	}
}

// clusterTimeout bounds the wait for a new cluster's slots to be served
// by every node.
const clusterTimeout = 30 * time.Second

// Cluster is a running Redis Cluster of three masters without replicas,
// each a redis-server on a free port.
type Cluster struct {
	Nodes []*Server
}

// StartCluster runs a three-node Redis Cluster (redis-server
// --cluster-enabled yes, three times, joined by redis-cli --cluster
// create) and stops it at cleanup. It skips, or fails with
// SIRTOMMY_REQUIRE_REDIS=1, without redis-server and redis-cli.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	need(t, "redis-server")
	need(t, "redis-cli")
	c := &Cluster{}
	for range 3 {
		c.Nodes = append(c.Nodes, Start(t, Options{Cluster: true}))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Wait until every node sees the whole cluster served.
	for _, n := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr()})
		for {
			info, err := rdb.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				_ = rdb.Close()
				t.Fatalf("the cluster node %s is not ready: %v %s", n.Addr(), err, info)
			}
			time.Sleep(pollInterval)
		}
		_ = rdb.Close()
	}
	return c
}

// Addrs are the nodes' "127.0.0.1:PORT".
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr()
	}
	return out
}

// URL names the cluster as --redis takes it: the first node, and the
// others as addr parameters ("redis://H1:P1?addr=H2:P2&addr=H3:P3").
func (c *Cluster) URL() string {
	a := c.Addrs()
	u := "redis://" + a[0]
	for i, x := range a[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + x
	}
	return u
}

// Client opens a go-redis cluster client on the cluster, closed at t's
// cleanup.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// MoveSlot moves the slot of key to another master of the cluster, with
// its keys, as a resharding does.
func (c *Cluster) MoveSlot(t testing.TB, key string) {
	t.Helper()
	ctx := t.Context()
	rdb := c.Client(t)
	slot64, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slot := int(slot64)
	src, err := rdb.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var dst *redis.Client
	var masters []*redis.Client
	for _, addr := range c.Addrs() {
		m := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = m.Close() })
		masters = append(masters, m)
		if addr != src.Options().Addr && dst == nil {
			dst = m
		}
	}
	srcID, err := src.ClusterMyID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	dstID, err := dst.ClusterMyID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(dst.Do(ctx, "cluster", "setslot", slot, "importing", srcID).Err())
	must(src.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err())
	host, port, _ := strings.Cut(dst.Options().Addr, ":")
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", host, port, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(src.Do(ctx, args...).Err())
	}
	for _, m := range masters {
		must(m.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err())
	}
}

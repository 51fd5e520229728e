package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/lobby/redislobby"
	"sirtommy/lobby/sqlstore"
	"sirtommy/race"
	"sirtommy/race/fleet"
	"sirtommy/race/memrace"
	"sirtommy/race/redisrace"
	"sirtommy/web/coach"
	"sirtommy/web/coach/rediscoach"
	"sirtommy/web/metrics"
)

// Redis client timeouts: a local or same-zone Redis answers in well under
// a millisecond, so a second without an answer means it is down, and a
// player's move should be refused quickly rather than hang.
const (
	redisDialTimeout = time.Second
	redisIOTimeout   = time.Second
	// redisStartTimeout bounds the PING at start, after which serve exits
	// saying Redis is unreachable.
	redisStartTimeout = 3 * time.Second
)

// backend is what the race service and the lobby's stores run on: live
// state in memory or a shared Redis (memoryBackend, redisBackend), and
// durable data in the SQL database (useDatabase).
type backend struct {
	deps     race.Deps
	stores   lobby.Stores                // the lobby's: memlobby's in memory mode, the durable ones the database's
	check    func(context.Context) error // /readyz: the database, and Redis in Redis mode
	claims   coach.Claims                // the analyses under way: live
	analyses coach.Store                 // finished analyses (durable) and claims (live)
	instance string                      // "" in memory mode
	// spread readies the Service's races for the fleet (Redis mode:
	// race/fleet) before it makes any, and returns what keeps them owned
	// until its context is done.
	spread func(svc *race.Service) (run func(context.Context))
	// restore rebuilds the races a data folder kept (local.go); nil: none.
	restore func(ctx context.Context, svc *race.Service) error
	close   func()
}

// memoryBackend keeps the live state in this process.
func memoryBackend(log zerolog.Logger) *backend {
	clock := race.SystemClock{}
	return &backend{
		deps:   race.Deps{Clock: clock, Log: log, Store: memrace.NewStore(), Bus: memrace.NewBus()},
		stores: memlobby.NewStores(lobby.MatchConfig{}, clock),
		claims: coach.NewMemoryStore(nil),
		spread: func(*race.Service) func(context.Context) { return func(context.Context) {} },
		close:  func() {},
	}
}

// useDatabase puts what must outlive the process (docs/storage.md) in the
// durable store db, whichever the live state's backend: this is the one
// place where the durable stores are plugged in: ratings and every game,
// ghosts, the days' boards, the arenas, the players' mistakes, the archive
// of finished races and the coach's analyses. /readyz pings db, and /metrics reports its pool and
// pings.
func (be *backend) useDatabase(db *sqlstore.DB, met *metrics.Metrics) {
	be.stores.Ratings = sqlstore.NewRatings(db)
	be.stores.Ghosts = sqlstore.NewGhosts(db, be.deps.Clock)
	be.stores.Dailies = sqlstore.NewDailies(db)
	be.stores.Arenas = sqlstore.NewArenas(db)
	be.stores.Mistakes = sqlstore.NewMistakes(db)
	be.deps.Archive = sqlstore.NewArchive(db)
	be.analyses = coach.NewSplit(sqlstore.NewAnalyses(db), be.claims)

	health := newDBHealth(db)
	met.MustRegister(health.collectors()...)
	live := be.check
	be.check = func(ctx context.Context) error {
		if err := health.ready(ctx); err != nil {
			return err
		}
		if live != nil {
			return live(ctx)
		}
		return nil
	}
}

// redisBackend connects to the Redis at url, or fails saying why.
func redisBackend(ctx context.Context, cfg serveConfig, log zerolog.Logger) (*backend, error) {
	rdb, leases, addr, err := redisClients(cfg.redisURL)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, redisStartTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = errors.Join(leases.Close(), rdb.Close())
		return nil, fmt.Errorf("redis at %s is unreachable: %w", addr, err)
	}
	instance := race.NewToken()[:16]
	keys := redisrace.Keys{Prefix: cfg.redisPrefix}
	clock := race.SystemClock{}
	bus := redisrace.NewBus(rdb, keys, instance, log.With().Str("component", "bus").Logger())
	extensions := redisrace.NewExtensions() // moves keep their races' leases
	cluster, err := redisrace.NewCluster(pctx, rdb, redisrace.ClusterOptions{
		Keys: keys, Instance: instance, Retention: cfg.redisRetention, Clock: clock,
		Log: log.With().Str("component", "cluster").Logger(), Leases: leases, Bus: bus,
		Extensions: extensions,
	})
	if err != nil {
		_ = errors.Join(bus.Close(), leases.Close(), rdb.Close())
		return nil, fmt.Errorf("redis at %s: %w", addr, err)
	}
	lobbyKeys := redislobby.Keys{Prefix: cfg.redisPrefix}
	presence := redislobby.NewPresence(rdb, lobbyKeys, instance, clock)
	courier, err := redislobby.NewCourier(pctx, rdb, lobbyKeys, instance, log.With().Str("component", "courier").Logger())
	if err != nil {
		_ = errors.Join(cluster.Close(), bus.Close(), leases.Close(), rdb.Close())
		return nil, fmt.Errorf("redis at %s: %w", addr, err)
	}
	log.Info().Str("redis", addr).Str("prefix", cfg.redisPrefix).Str("instance", instance).Msg("redis mode")
	return &backend{
		deps: race.Deps{
			Clock: clock, Log: log, Bus: bus, Records: cluster,
			Store: redisrace.NewStore(rdb, redisrace.StoreOptions{
				Keys: keys, Retention: cfg.redisRetention, Instance: instance, Extensions: extensions,
			}),
		},
		claims:   rediscoach.New(rdb, cfg.redisPrefix),
		instance: instance,
		stores: lobby.Stores{
			Queue:      redislobby.NewQueue(rdb, lobbyKeys, lobby.MatchConfig{}, clock).DropDead().For(instance),
			Challenges: redislobby.NewChallenges(rdb, lobbyKeys, clock),
			Invites:    redislobby.NewInvites(rdb, lobbyKeys),
			Rooms:      redislobby.NewRooms(rdb, lobbyKeys),
			Seats:      redislobby.NewSeats(rdb, lobbyKeys),
			Courier:    courier,
			Races:      presence,
			Presence:   presence,
		},
		check: redisReady(rdb, cfg.redisPrefix, instance),
		spread: func(svc *race.Service) func(context.Context) {
			f := fleet.New(svc, cluster)
			f.HoldSeats(cfg.seatMoves)
			return func(ctx context.Context) { f.Run(ctx, redisrace.RenewEvery) }
		},
		close: func() {
			fctx, cancel := context.WithTimeout(context.Background(), redisIOTimeout)
			defer cancel()
			forgot := presence.Forget(fctx) // this instance's players and races stop counting at once
			if err := errors.Join(forgot, courier.Close(), cluster.Close(), bus.Close(), leases.Close(), rdb.Close()); err != nil {
				log.Warn().Err(err).Msg("redis connections closed with an error")
			}
		},
	}, nil
}

// redisClients makes the clients of --redis url: a single Redis
// ("redis://[:password@]host:port/db"), or a Redis Cluster when the URL
// names more seed nodes as addr parameters
// ("redis://[:password@]host1:port1?addr=host2:port2&addr=host3:port3";
// no database: a cluster has only 0). The lease renewals get a client of
// their own with one connection per node (see
// redisrace.ClusterOptions.Leases). addr names the Redis for logs.
func redisClients(url string) (rdb, leases redis.UniversalClient, addr string, err error) {
	if strings.Contains(url, "addr=") {
		opt, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, nil, "", usagef("--redis %q: %v", redactURL(url), err)
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
		lopt := *opt
		lopt.PoolSize, lopt.MinIdleConns = 1, 0
		return redis.NewClusterClient(opt), redis.NewClusterClient(&lopt), "cluster " + strings.Join(opt.Addrs, ","), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, "", usagef("--redis %q: %v", redactURL(url), err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
	lopt := *opt
	lopt.PoolSize, lopt.MinIdleConns = 1, 0
	return redis.NewClient(opt), redis.NewClient(&lopt), opt.Addr, nil
}

// redactURL hides a password in a Redis URL.
func redactURL(s string) string {
	if copt, err := redis.ParseClusterURL(s); strings.Contains(s, "addr=") && err == nil && copt.Password != "" {
		return "redis://…@" + strings.Join(copt.Addrs, ",")
	}
	opt, err := redis.ParseURL(s)
	if err != nil || opt.Password == "" {
		return s
	}
	return "redis://…@" + opt.Addr
}

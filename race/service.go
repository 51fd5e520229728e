package race

import (
	"context"
	"sync"
	"time"
)

// Service keeps the races of one server: it makes them, finds them by id,
// keeps finished ones for replays, archives them (Deps.Archive: see
// archiver.go), and drains them on shutdown.
type Service struct {
	deps Deps
	// arch archives the races that finish here; nil without an Archive.
	arch *archiver
	// sweeps archive what dead instances left unarchived (archivesweep.go);
	// nil unless the Records keep an ArchiveLedger.
	sweeps *sweeps

	hookMu sync.Mutex
	onEnd  func(Ended) // set by OnEnd

	mu       sync.Mutex
	races    map[string]*Race
	draining bool

	// fleet spreads the races over instances (Redis mode); nil in
	// memory mode. Set once, by UseFleet, before the Service is used.
	fleet Fleet
}

// Fleet is what a Service hands over when its races are spread over
// several instances (race/fleet, Redis mode): registering a new race's
// owner, finding a race wherever it runs, and handing live races over on
// shutdown. The Service never waits on its own lock for any of these.
type Fleet interface {
	// Register makes this instance the owner of the new race rec
	// describes and stores its record. On failure nothing is held.
	Register(ctx context.Context, rec *Record) error
	// Unregister gives up a new race that was registered but will not
	// run (the Service began draining meanwhile).
	Unregister(ctx context.Context, id string)
	// Open is Service.Open: a connection's handle of race id, wherever
	// it runs.
	Open(ctx context.Context, id string) (Handle, error)
	// Handover stops this instance's copies of the live races and hands
	// them to the other instances (Drain).
	Handover(ctx context.Context, races []*Race)
}

// NewService makes an empty Service whose races share deps. With an
// Archive, it archives the races that finish here, and, when the Records
// keep a list of the races to archive (ArchiveLedger), sweeps it now and
// every minute until Drain.
func NewService(deps Deps) *Service {
	s := &Service{deps: deps, races: make(map[string]*Race), onEnd: deps.OnEnd}
	s.deps.OnEnd = s.ended // races made or rebuilt here report to the hook set now
	s.deps.ended = s.raceEnded
	if deps.Archive != nil {
		s.arch = newArchiver(deps.Archive, deps.Log.With().Str("component", "archiver").Logger())
		s.startSweeps()
	}
	return s
}

// UseFleet makes f the Service's fleet (Redis mode). It is called once,
// by race/fleet's New, before the Service makes or opens a race.
func (s *Service) UseFleet(f Fleet) { s.fleet = f }

// Deps is what the Service's races share, their OnEnd reporting to the
// Service's hook: what a race rebuilt for the Service needs (Restore).
func (s *Service) Deps() Deps { return s.deps }

// Open finds a race for a connection. In memory mode it is the race
// itself; with a Fleet it is the fleet's handle, which takes each request
// to wherever the race runs. A finished race the live store no longer
// has is read from the Archive: a handle that shows its record and final
// state and refuses to play (race-over).
func (s *Service) Open(ctx context.Context, id string) (Handle, error) {
	var h Handle
	var err error
	if s.fleet != nil {
		h, err = s.fleet.Open(ctx, id)
	} else if r, gerr := s.Get(id); gerr == nil {
		h = r
	} else {
		err = gerr
	}
	if err != nil && s.arch != nil && ErrorCode(err) == CodeNoSuchRace {
		return s.openArchived(ctx, id, err)
	}
	return h, err
}

// Adopt lists live race r, rebuilt here from its record (the fleet took
// it over), unless the Service is draining: it reports whether it did.
// r makes its next race with this Service.
func (s *Service) Adopt(r *Race) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	r.spawn = s.create
	s.races[r.id] = r
	return true
}

// Keep lists finished race r, rebuilt here for its record and replay,
// unless a race with its id is listed already: it returns the race listed.
func (s *Service) Keep(r *Race) *Race {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.races[r.id]; ok {
		return old
	}
	s.races[r.id] = r
	return r
}

// Drop unlists race r (another instance runs it now), unless another
// race with its id was listed meanwhile.
func (s *Service) Drop(r *Race) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.races[r.id] == r {
		delete(s.races, r.id)
	}
}

// OnEnd sets the hook called once for every race that ends on this
// instance (Deps.OnEnd), replacing the one before. The lobby sets it to
// record results, so that races taken over from a dead instance are
// recorded too.
func (s *Service) OnEnd(f func(Ended)) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.onEnd = f
}

// raceEnded is every race's end hook (Deps.ended): a finished race is
// queued for the archive first, so that the hook's followers find it
// there (Followed), then the hook set by OnEnd is called.
func (s *Service) raceEnded(r *Race, e Ended) {
	if s.arch != nil && e.Result.Outcome != OutcomeAborted {
		s.arch.queue(r)
	}
	s.ended(e)
}

func (s *Service) ended(e Ended) {
	s.hookMu.Lock()
	f := s.onEnd
	s.hookMu.Unlock()
	if f != nil {
		f(e)
	}
}

// SeatOf finds the seat reserved for the lobby's player id player in race
// id, here or (Redis mode) in its record, whichever instance made it. It
// returns the seat's resume token; reserved reports whether the race has
// reserved seats at all (a race the lobby made), so that a player it did
// not reserve for can be told so. A race that cannot be found is not
// reserved: joining it then fails as usual.
func (s *Service) SeatOf(ctx context.Context, id, player string) (token string, reserved bool, err error) {
	var seats []SeatState
	if r, err := s.Get(id); err == nil {
		r.mu.Lock()
		seats = make([]SeatState, len(r.seats))
		for i := range seats {
			seats[i] = SeatState{Player: r.seats[i].player, Token: r.seats[i].token}
		}
		r.mu.Unlock()
	} else if c := s.deps.Records; c != nil {
		rec, found, err := c.Load(ctx, id)
		if err != nil {
			return "", false, &Error{Code: CodeUnavailable, Message: "the race cannot be read now; try again shortly", Err: err}
		}
		if !found {
			return "", false, nil
		}
		seats = rec.Seats[:]
	}
	for i := range seats {
		if seats[i].Player != "" {
			reserved = true
			if seats[i].Player == player {
				return seats[i].Token, true, nil
			}
		}
	}
	return "", reserved, nil
}

// Create makes a new race waiting for its players.
func (s *Service) Create(opts Options) (*Race, error) { return s.create(opts, nil) }

// create makes a race, lets prepare (if set) set it up before anyone else
// can see it, registers it with the Fleet (Redis mode) and lists it. The
// Service's lock is taken only to read the draining flag and to list the
// race: never during the Fleet's calls (see the package's lock order).
func (s *Service) create(opts Options, prepare func(*Race)) (*Race, error) {
	if s.isDraining() {
		return nil, errDraining()
	}
	r, err := New(NewToken(), opts, s.deps)
	if err != nil {
		return nil, err
	}
	r.spawn = s.create
	if prepare != nil {
		r.mu.Lock()
		prepare(r)
		r.unlock()
	}
	f := s.fleet
	if f != nil {
		r.mu.Lock()
		rec := r.recordLocked()
		r.unlock()
		ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
		defer cancel()
		if err := f.Register(ctx, rec); err != nil {
			r.Stop()
			r.log.Warn().Err(err).Msg("race not created: it could not be registered")
			return nil, &Error{Code: CodeUnavailable, Message: "the race could not be registered; try again shortly", Err: err}
		}
	}
	s.mu.Lock()
	if s.draining { // Drain began meanwhile and has not seen this race
		s.mu.Unlock()
		r.Stop()
		if f != nil {
			ctx, cancel := context.WithTimeout(context.Background(), recordsTimeout)
			defer cancel()
			f.Unregister(ctx, r.id)
		}
		return nil, errDraining()
	}
	s.races[r.ID()] = r
	s.mu.Unlock()
	r.log.Info().Str("variant", r.rules.Name).Bool("public", opts.Public).
		Bool("dealNamed", opts.DealNamed).Dur("timeLimit", r.opts.TimeLimit).Msg("race created")
	return r, nil
}

// Draining reports whether Drain has begun: the Service makes and adopts
// no race any more.
func (s *Service) Draining() bool { return s.isDraining() }

func (s *Service) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

func errDraining() *Error {
	return Errorf(CodeDraining, "the server is shutting down; try again in a moment")
}

// Get finds a race by id.
func (s *Service) Get(id string) (*Race, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.races[id]
	if !ok {
		return nil, Errorf(CodeNoSuchRace, "no race has id %q", id)
	}
	return r, nil
}

// Live is the number of races not over.
func (s *Service) Live() int {
	n := 0
	for _, r := range s.snapshot() {
		if !r.State().Over() {
			n++
		}
	}
	return n
}

// Evict drops from memory the races that ended at least keep ago, and
// their logs from a store that keeps them in this process (Forgetter). It
// returns how many it dropped. Open then finds them in the Archive (in
// Redis mode, first rebuilt from their records while Redis keeps them);
// without one, in memory mode, they are gone (GET /api/races/{id} says no
// such race). A race still waiting for the archiver is kept.
func (s *Service) Evict(keep time.Duration) int {
	now := s.deps.Clock.Now()
	var old []*Race
	// The races are read without the Service's lock, which is never held
	// while waiting for a race's.
	for _, r := range s.snapshot() {
		r.mu.Lock()
		ended := r.state.Over() && !r.endedAt.IsZero() && now.Sub(r.endedAt) >= keep
		r.mu.Unlock()
		if ended && s.arch != nil && s.arch.holds(r.id) {
			continue // the archiver reads its moves yet
		}
		if ended {
			old = append(old, r)
		}
	}
	var gone []string
	s.mu.Lock()
	for _, r := range old {
		if s.races[r.id] == r { // not replaced meanwhile (a race taken over)
			delete(s.races, r.id)
			gone = append(gone, r.id)
		}
	}
	s.mu.Unlock()
	if f, ok := s.deps.Store.(Forgetter); ok {
		for _, id := range gone {
			if err := f.Forget(context.Background(), id); err != nil {
				s.deps.Log.Warn().Err(err).Str("race", id).Msg("race log not forgotten")
			}
		}
	}
	return len(gone)
}

// Races returns every race the service keeps, in no particular order.
func (s *Service) Races() []*Race { return s.snapshot() }

func (s *Service) snapshot() []*Race {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Race, 0, len(s.races))
	for _, r := range s.races {
		out = append(out, r)
	}
	return out
}

// Drain stops making races, aborts those still waiting for players, and
// waits for the others to end until ctx is done; it then aborts what is
// left with reason "shutdown". It returns the number of races aborted that
// way. Last, it waits until ctx is done for the finished races to be
// archived, and logs those that were not.
//
// In Redis mode it aborts nothing: it stops its copies of the live races
// and hands them over to the other instances, whose players resume them
// there.
func (s *Service) Drain(ctx context.Context) int {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	if s.sweeps != nil {
		s.sweeps.stop(ctx)
	}
	if s.arch != nil {
		_, ledger := s.deps.Records.(ArchiveLedger)
		defer s.arch.flush(ctx, ledger)
	}
	races := s.snapshot()
	if s.fleet != nil {
		s.fleet.Handover(ctx, races)
		return 0
	}
	for _, r := range races {
		if r.State() == Waiting {
			r.Abort(ReasonShutdown)
		}
	}
	cut := 0
	for _, r := range races {
		select {
		case <-r.Done():
		case <-ctx.Done():
			if !r.State().Over() {
				r.Abort(ReasonShutdown)
				cut++
			}
		}
	}
	return cut
}

package redisrace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/race"
)

// opTimeout bounds one Redis call of the store: a healthy Redis answers in
// well under a millisecond, and a player waiting for a move's
// acknowledgement should hear "unavailable" in seconds, not minutes.
const opTimeout = 2 * time.Second

// appendScript appends one move to a race's stream unless the seat's log
// already has it. KEYS: log, seqs, owner. ARGV: seat, seq, move, atMs, ttl
// seconds, this instance ("" for no fencing by the race's lease), the
// request id, the lease in ms, the seat's holder ("" for the race's owner
// playing a seat nobody claimed; ClaimSeat), then any number of channel
// and message pairs that it publishes once the log has the move (the
// bus's events of the move, race.Carried), and marks them published
// (field "SEAT:SEQ:c"), so that the same move sent again after its answer
// was lost is not published twice. It returns {1 when appended or 0 when
// the same move was already there, 1 when it extended this instance's
// lease on the race or 0, 1 when the move's events are published (by this
// call, or by the one that appended it) or 0}, or an error: "NOTOWNER"
// when another instance has taken the race over (the fence: an instance
// that lost a race cannot write behind the new owner's back), "NOTHOLDER"
// when the seat is held by another than the caller (its player resumed
// elsewhere), "CONFLICT" when the seat's log contradicts it, and "ENDED"
// once the race's end sealed the log (Seal; a move already in the log is
// still answered as stored). Redis runs it atomically, so two instances
// cannot both append a seat's next move. The lease is extended only while
// this instance holds it: one that ran out stays out, for Renew to find.
var appendScript = redis.NewScript(`
local extended = 0
if ARGV[6] ~= '' then
  local o = redis.call('GET', KEYS[3])
  if o and o ~= ARGV[6] then return redis.error_reply('NOTOWNER ' .. o) end
  if o then
    redis.call('PEXPIRE', KEYS[3], ARGV[8])
    extended = 1
  end
end
local h = redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or ''
if h ~= ARGV[9] then
  if h == '' then h = 'the race' end
  return redis.error_reply('NOTHOLDER seat ' .. ARGV[1] .. ' is held by ' .. h)
end
local f = ARGV[1] .. ':' .. ARGV[2]
local old = redis.call('HGET', KEYS[2], f)
if old then
  if old == ARGV[3] then return {0, extended, redis.call('HEXISTS', KEYS[2], f .. ':c')} end
  return redis.error_reply('CONFLICT seat ' .. ARGV[1] .. ' seq ' .. ARGV[2] .. ' holds ' .. old)
end
local ended = redis.call('HGET', KEYS[2], 'end')
if ended then return redis.error_reply('ENDED ' .. ended) end
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if tonumber(ARGV[2]) <= last then
  return redis.error_reply('CONFLICT seat ' .. ARGV[1] .. ' seq ' .. ARGV[2] .. ' is not above ' .. last)
end
redis.call('XADD', KEYS[1], '*', 'seat', ARGV[1], 'seq', ARGV[2], 'move', ARGV[3], 'at', ARGV[4], 'id', ARGV[7])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2], f, ARGV[3])
local published = 0
if #ARGV > 9 then
  for i = 10, #ARGV, 2 do redis.call('PUBLISH', ARGV[i], ARGV[i + 1]) end
  redis.call('HSET', KEYS[2], f .. ':c', 1)
  published = 1
end
local ttl = tonumber(ARGV[5])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return {1, extended, published}
`)

// seatClaimScript makes an instance the holder of a race's seat: the only
// one whose appends of the seat's moves the log takes (appendScript's
// holder), until another claims it. KEYS: seqs. ARGV: seat, instance, ttl
// seconds. Each claim of a seat is numbered, so that an instance that
// claims a seat again (its player left and came back) does not pass for
// its earlier self. It returns the holder, "INSTANCE#N", or "ENDED" once
// the race's end sealed the log.
var seatClaimScript = redis.NewScript(`
local ended = redis.call('HGET', KEYS[1], 'end')
if ended then return redis.error_reply('ENDED ' .. ended) end
local n = redis.call('HINCRBY', KEYS[1], 'hn:' .. ARGV[1], 1)
local h = ARGV[2] .. '#' .. n
redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], h)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return h
`)

// seatReleaseScript gives a race's seat back to its owner: the seat's holder
// is cleared, so that the owner's appends (with no holder) are taken
// again and every earlier holder's are not (their claims' numbers stay
// spent). KEYS: seqs, owner. ARGV: seat, this instance ("" for no
// fencing). An instance that does not own the race releases nothing
// ("NOTOWNER").
var seatReleaseScript = redis.NewScript(`
if ARGV[2] ~= '' then
  local o = redis.call('GET', KEYS[2])
  if o and o ~= ARGV[2] then return redis.error_reply('NOTOWNER ' .. o) end
end
redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
return 1
`)

// sealScript ends a race's log: appends of new moves are refused
// ("ENDED") from then on. KEYS: seqs, owner, result. ARGV: why, ttl
// seconds, this instance ("" for no fencing), then the race's seats. It
// returns what sealed the log (this call's why, or an earlier seal's) and
// each seat's last seq then: the moves the race's end must count,
// whichever instance appended them. Like a decision (decideScript), an
// instance that no longer owns the race seals nothing ("NOTOWNER") unless
// its result is stored.
var sealScript = redis.NewScript(`
if ARGV[3] ~= '' then
  local o = redis.call('GET', KEYS[2])
  if o and o ~= ARGV[3] and redis.call('EXISTS', KEYS[3]) == 0 then
    return redis.error_reply('NOTOWNER ' .. o)
  end
end
local why = redis.call('HGET', KEYS[1], 'end')
if not why then
  why = ARGV[1]
  redis.call('HSET', KEYS[1], 'end', why)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
local out = {why}
for i = 4, #ARGV do out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i]) or '0' end
return out
`)

// Store is a race.Store in Redis: one stream per race.
type Store struct {
	rdb       redis.UniversalClient
	keys      Keys
	retention time.Duration
	instance  string
	extended  *Extensions
}

var (
	_ race.Store    = (*Store)(nil)
	_ race.Retainer = (*Store)(nil)
)

// StoreOptions configure a Store.
type StoreOptions struct {
	Keys Keys
	// Retention is how long a finished race's log is kept; zero means
	// DefaultRetention.
	Retention time.Duration
	// Instance, when set, fences appends: they fail with race.ErrNotOwner
	// once another instance owns the race (Cluster leases), and extend
	// the lease while it owns it.
	Instance string
	// Extensions, when set, learns of every lease an append extended;
	// give the same one to the instance's Cluster, whose Renew then skips
	// those races.
	Extensions *Extensions
}

// NewStore makes a Store on rdb.
func NewStore(rdb redis.UniversalClient, o StoreOptions) *Store {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	return &Store{rdb: rdb, keys: o.Keys, retention: o.Retention, instance: o.Instance, extended: o.Extensions}
}

// Append adds a move to the race's stream, atomically checking the seat's
// seq: a move already stored is not stored twice, and one contradicting the
// log is refused with race.ErrConflict. When Redis cannot be reached the
// error wraps race.ErrUnavailable.
func (s *Store) Append(ctx context.Context, raceID string, m race.MoveRecord) error {
	_, err := s.AppendCarrying(ctx, raceID, m, nil)
	return err
}

var _ race.CarryingStore = (*Store)(nil)

// AppendCarrying is Append that also publishes events, the bus's messages
// of the move (Bus.Carry), in the same script: a move's messages to other
// instances cost no round trip of their own. published reports whether
// the move's events went out: by this call, or, when the log had the move
// already (sent again), by the call that appended it with events.
func (s *Store) AppendCarrying(ctx context.Context, raceID string, m race.MoveRecord, events []race.Carried) (published bool, err error) {
	return s.append(ctx, raceID, s.instance, "", m, events)
}

// AppendHeld is AppendCarrying by the holder of m's seat (ClaimSeat),
// which need not own the race: the log takes it only while holder holds
// the seat (an error wrapping race.ErrNotHolder once another claimed it),
// and, like every append, only until the race's end sealed the log
// (race.ErrRaceEnded).
func (s *Store) AppendHeld(ctx context.Context, raceID, holder string, m race.MoveRecord, events []race.Carried) (published bool, err error) {
	return s.append(ctx, raceID, "", holder, m, events)
}

// append runs appendScript, fenced by the race's lease when instance is
// set and by the seat's holder.
func (s *Store) append(ctx context.Context, raceID, instance, holder string, m race.MoveRecord, events []race.Carried) (published bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	keys := []string{s.keys.Log(raceID), s.keys.Seqs(raceID), s.keys.Owner(raceID)}
	args := make([]any, 0, 9+2*len(events))
	args = append(args, m.Seat, m.Seq, m.Move, m.AtMs, int64(LiveTTL/time.Second), instance, m.ID, LeaseTTL.Milliseconds(), holder)
	for _, e := range events {
		args = append(args, e.Channel, e.Payload)
	}
	sent := s.extended.now() // before: the lease runs from no sooner than this
	res, err := appendScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		err = classify(err)
		if errors.Is(err, race.ErrNotOwner) {
			s.extended.forget(raceID) // for Renew to find it lost at once
		}
		return false, fmt.Errorf("race %s seat %d seq %d: append: %w", raceID, m.Seat, m.Seq, err)
	}
	if len(res) >= 2 && res[1] == 1 {
		s.extended.extended(raceID, sent)
	}
	return len(res) == 3 && res[2] == 1, nil
}

// ClaimSeat makes this instance the holder of race raceID's seat: from
// now on the log takes the seat's moves from AppendHeld with the holder
// returned, and from nobody else (not the race's owner, nor an earlier
// holder) until the seat is claimed again. Once the race's end sealed
// the log the claim is refused with race.ErrRaceEnded.
func (s *Store) ClaimSeat(ctx context.Context, raceID string, seat int) (holder string, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	holder, err = seatClaimScript.Run(ctx, s.rdb, []string{s.keys.Seqs(raceID)}, seat, s.instance, int64(LiveTTL/time.Second)).Text()
	if err != nil {
		return "", fmt.Errorf("race %s seat %d: claim: %w", raceID, seat, classify(err))
	}
	return holder, nil
}

// ReleaseSeat gives race raceID's seat back to the race's owner, this
// instance: its appends of the seat's moves are taken again, and no
// earlier holder's (race.ErrNotOwner when another instance owns the
// race).
func (s *Store) ReleaseSeat(ctx context.Context, raceID string, seat int) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	keys := []string{s.keys.Seqs(raceID), s.keys.Owner(raceID)}
	if err := seatReleaseScript.Run(ctx, s.rdb, keys, seat, s.instance).Err(); err != nil {
		return fmt.Errorf("race %s seat %d: release: %w", raceID, seat, classify(err))
	}
	return nil
}

// Seal ends race raceID's log, for why: every later append of a new move
// is refused with race.ErrRaceEnded, whoever makes it. It returns what
// sealed it (why, or an earlier seal's) and the last seq of each of the
// race's seats then, the moves its end must count. With an Instance, it
// fails with race.ErrNotOwner while another instance owns the race and
// its result is not stored: an instance that lost the race cannot end
// it.
func (s *Store) Seal(ctx context.Context, raceID, why string, seats int) (sealedBy string, last []int, err error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	args := make([]any, 0, 3+seats)
	args = append(args, why, int64(LiveTTL/time.Second), s.instance)
	for i := range seats {
		args = append(args, i)
	}
	keys := []string{s.keys.Seqs(raceID), s.keys.Owner(raceID), s.keys.Result(raceID)}
	res, err := sealScript.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err != nil {
		return "", nil, fmt.Errorf("race %s: seal: %w", raceID, classify(err))
	}
	if len(res) != 1+seats {
		return "", nil, fmt.Errorf("race %s: seal: %d replies for %d seats", raceID, len(res), seats)
	}
	last = make([]int, seats)
	for i, v := range res[1:] {
		if last[i], err = strconv.Atoi(v); err != nil {
			return "", nil, fmt.Errorf("race %s: seal: seat %d's last seq %q", raceID, i, v)
		}
	}
	return res[0], last, nil
}

// endField is the field of a race's seqs hash that seals its log
// (appendScript, sealScript); endFinished is its value once the race's
// end was decided (Finished).
const (
	endField    = "end"
	endFinished = "finished"
)

// Moves reads the race's whole stream.
func (s *Store) Moves(ctx context.Context, raceID string) ([]race.MoveRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	msgs, err := s.rdb.XRange(ctx, s.keys.Log(raceID), "-", "+").Result()
	if err != nil {
		return nil, fmt.Errorf("race %s: read log: %w", raceID, classify(err))
	}
	out := make([]race.MoveRecord, 0, len(msgs))
	for _, x := range msgs {
		m, err := parseRecord(x.Values)
		if err != nil {
			return nil, fmt.Errorf("race %s: log entry %s: %w", raceID, x.ID, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Finished seals the race's log (Seal: no new move is taken after its
// end, from any instance) and keeps it for the retention period from now.
func (s *Store) Finished(ctx context.Context, raceID string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, s.keys.Seqs(raceID), endField, endFinished)
		p.Expire(ctx, s.keys.Log(raceID), s.retention)
		p.Expire(ctx, s.keys.Seqs(raceID), s.retention)
		return nil
	})
	if err != nil {
		return fmt.Errorf("race %s: set retention: %w", raceID, classify(err))
	}
	return nil
}

func parseRecord(v map[string]any) (race.MoveRecord, error) {
	str := func(k string) string { s, _ := v[k].(string); return s }
	seat, err1 := strconv.Atoi(str("seat"))
	seq, err2 := strconv.Atoi(str("seq"))
	at, err3 := strconv.ParseInt(str("at"), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return race.MoveRecord{}, fmt.Errorf("malformed: %w", err)
	}
	return race.MoveRecord{Seat: seat, Seq: seq, Move: str("move"), AtMs: at, ID: str("id")}, nil
}

// busyReplies start the replies of a Redis that is up but cannot serve
// yet (LOADING its file after a restart, a replica catching up, a script
// running too long): unavailable for now, not a fault.
var busyReplies = []string{"LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"}

// classify wraps a Redis error: a reply starting "CONFLICT" as
// race.ErrConflict, any failure to reach Redis, or a Redis not ready to
// serve, as race.ErrUnavailable.
func classify(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		for _, p := range busyReplies {
			if strings.HasPrefix(re.Error(), p) {
				return fmt.Errorf("%w: %w", race.ErrUnavailable, err)
			}
		}
		if strings.HasPrefix(re.Error(), "CONFLICT") {
			return fmt.Errorf("%w: %s", race.ErrConflict, re.Error())
		}
		if strings.HasPrefix(re.Error(), "NOTHOLDER") {
			return fmt.Errorf("%w (%w): %s", race.ErrNotHolder, race.ErrUnavailable, re.Error())
		}
		if strings.HasPrefix(re.Error(), "ENDED") {
			return fmt.Errorf("%w: %s", race.ErrRaceEnded, re.Error())
		}
		if strings.HasPrefix(re.Error(), "NOTOWNER") {
			return fmt.Errorf("%w (%w): %s", race.ErrNotOwner, race.ErrUnavailable, re.Error())
		}
		return err
	}
	if errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("%w: %w", race.ErrUnavailable, err)
}

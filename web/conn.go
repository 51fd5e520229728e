package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"sirtommy/lobby"
	"sirtommy/race"
)

// Connection limits, after gorilla/websocket's chat example.
const (
	// writeWait is the time allowed to write one message to the peer.
	writeWait = 10 * time.Second
	// pongWait is the time allowed to read the next pong (or message).
	pongWait = 60 * time.Second
	// pingPeriod sends pings often enough that a live peer's pong arrives
	// before pongWait runs out.
	pingPeriod = pongWait * 9 / 10
	// handshakeTimeout bounds the websocket upgrade.
	handshakeTimeout = 10 * time.Second
	// maxMessageSize is the largest client message handled: the biggest
	// legitimate one (a resume with a race id, a token and a name) is under
	// 300 bytes. A larger one gets a "too-large" error; the connection
	// stays open.
	maxMessageSize = 4 << 10
	// hardReadLimit is the largest frame read at all: past it gorilla closes
	// the connection with 1009 instead of reading more.
	hardReadLimit = 64 << 10
)

// Close causes, mapped to close codes by closeFor.
var (
	errSlow     = errors.New("client too slow: send queue full")
	errFlood    = errors.New("client flooding: persistently over the message budget")
	errReplaced = errors.New("seat resumed by another connection")
	errDone     = errors.New("reader done")
)

// closeReplaced is the close code sent to a connection whose seat another
// connection resumed (application range 4000-4999).
const closeReplaced = 4001

func closeFor(cause error) (int, string) {
	switch {
	case errors.Is(cause, errShutdown):
		return websocket.CloseGoingAway, "server shutting down"
	case errors.Is(cause, errSlow):
		return websocket.ClosePolicyViolation, "too slow"
	case errors.Is(cause, errFlood):
		return websocket.ClosePolicyViolation, "rate limit"
	case errors.Is(cause, errReplaced):
		return closeReplaced, "resumed elsewhere"
	}
	return websocket.CloseNormalClosure, ""
}

// role is what a connection is doing in a race.
type role uint8

const (
	roleNone role = iota
	rolePlayer
	roleSpectator
)

// conn is one websocket client. Its reader runs in run's goroutine. It
// has no writer goroutine of its own: what is queued for it (enqueue) is
// written by whoever finds nobody writing, one goroutine at a time. The
// reader writes the replies to the message it handled itself once it is
// done with it; an event from elsewhere (the opponent's move, the lobby's
// heartbeat, a ping) is written by the goroutine that delivers it, as far
// as the socket takes it without waiting (writeOnTheWay), and only what is
// left starts a short-lived writer goroutine. An idle connection so costs
// one goroutine. The race's events reach it through Deliver, which never
// blocks.
type conn struct {
	srv     *Server
	ws      *websocket.Conn
	cork    *corkConn
	site    string // "http://host" as the client reached the server, for links
	log     zerolog.Logger
	ctx     context.Context // done once the connection is closing
	cancel  context.CancelCauseFunc
	limiter *rate.Limiter
	dropped atomic.Bool // set once the send queue overflowed
	// queueMax bounds the messages waiting for a slow client.
	queueMax int

	// The send queue: mu guards it and the flags. writing is set while a
	// goroutine owns the websocket's writing side; reading while the
	// reader handles a message (it writes what that queued afterwards).
	mu      sync.Mutex
	queue   []any
	spare   []any // the last batch's slice, for the next
	writing bool
	reading bool
	werr    error         // the write that failed, if one did
	pingT   *time.Timer   // the next ping
	closed  chan struct{} // closed once the websocket is
	// racing is set while the connection is seated in a race that is not
	// over: the lobby's updates are then held back, the latest in
	// heldLobby, and sent when the race ends or the seat is left. A
	// racing player's screen shows no lobby, and at 1,000 races the
	// lobby's once-a-second update to every racer was a third of the
	// server's writes (docs/performance.md).
	racing    bool
	heldLobby *lobby.LobbyEvent

	// Owned by the reader goroutine.
	readSet time.Time // when the read deadline was last pushed back
	role    role
	race    race.Handle
	seat    int
	unwatch func()
	strikes int
	// The connection's player, once it said hello (lobby.go).
	session     *lobby.Session
	playerToken string
	// sessionCookie is the account session the browser sent when it
	// opened the websocket ("" none): a hello with an account's player
	// token is admitted only with it (accounts.go).
	sessionCookie string
}

func (s *Server) handleWebsocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, race.CodeDraining, "the server is shutting down")
		return
	}
	s.conns.Add(1) // under mu, so never concurrently with CloseConns' Wait
	s.mu.Unlock()
	cw := &corkingWriter{ResponseWriter: w}
	ws, err := s.upgrader.Upgrade(cw, r, nil)
	if err != nil {
		s.conns.Done()
		s.log.Debug().Err(err).Str("remote", r.RemoteAddr).Msg("websocket upgrade failed")
		return // the upgrader has replied
	}
	s.Stats.Conns.Add(1)
	id := s.nextConn.Add(1)
	c := &conn{
		srv:     s,
		ws:      ws,
		cork:    cw.conn,
		site:    httpScheme(r) + "://" + r.Host,
		log:     s.log.With().Uint64("conn", id).Str("remote", r.RemoteAddr).Logger(),
		limiter: rate.NewLimiter(s.deps.Limits.MsgRate, s.deps.Limits.MsgBurst),

		queueMax: s.deps.Limits.SendQueue,

		sessionCookie: sessionToken(r),
	}
	// The connection runs on a goroutine of its own and the handler
	// returns: net/http then lets go of the request's read and write
	// buffers and its serving goroutine's stack, which it would otherwise
	// hold for the websocket's whole life (about 10 KB per connection).
	go func() {
		defer s.conns.Done()
		defer s.Stats.Conns.Add(-1)
		if err := c.run(s.connCtx); err != nil {
			c.log.Info().Err(err).Msg("connection ended with an error")
			return
		}
		c.log.Debug().Msg("connection closed")
	}()
}

// run serves the connection until the client leaves or ctx is done.
func (c *conn) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	c.ctx, c.cancel = ctx, cancel
	c.closed = make(chan struct{})
	defer cancel(errDone)
	context.AfterFunc(ctx, c.closeSoon)
	c.mu.Lock()
	c.pingT = time.AfterFunc(pingPeriod, c.ping)
	c.mu.Unlock()
	rerr := c.readLoop(ctx)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, errDone) && c.srv.connCtx.Err() == nil {
		c.log.Info().Err(cause).Msg("the server closes the connection")
	}
	cancel(errDone)
	<-c.closed
	c.leave()
	if c.session != nil {
		c.session.Leave() // out of the queue and its challenge at once
	}
	c.mu.Lock()
	werr := c.werr
	c.mu.Unlock()
	return errors.Join(rerr, werr)
}

// leave gives up the connection's seat or spectator place.
func (c *conn) leave() {
	switch c.role {
	case rolePlayer:
		c.race.Leave(c.seat, c)
		c.setRacing(false)
	case roleSpectator:
		c.unwatch()
	}
	c.role = roleNone
}

// setRacing records whether the connection's seat is in a race that is
// not over; when it no longer is, the lobby update held back meanwhile,
// if any, is queued.
func (c *conn) setRacing(on bool) {
	c.mu.Lock()
	c.racing = on
	var start, drop bool
	if held := c.heldLobby; !on && held != nil {
		c.heldLobby = nil
		start, drop = c.pushLocked(held)
	}
	c.mu.Unlock()
	c.afterPush(start, drop)
}

// Deliver queues a race event. It never blocks: a client whose queue is
// full is dropped.
func (c *conn) Deliver(ev race.Event) { c.afterPush(c.push(ev)) }

var _ race.Queuer = (*conn)(nil)

// Queue is Deliver for a race that holds its lock: the event is queued,
// and if this call took the writing side it reports true, for the race
// to call Flush once its lock is released (race.Queuer).
func (c *conn) Queue(ev race.Event) bool {
	start, drop := c.push(ev)
	if drop {
		c.afterPush(false, true)
		return false
	}
	return start
}

// push queues ev, as pushLocked reports: a spectators' board encoded once
// for all of them; the lobby's update held back while the connection's
// seat is racing (only the latest matters); a seat's own state records
// whether it is racing, and once it is not, the held update goes after
// it.
func (c *conn) push(ev race.Event) (start, drop bool) {
	var m any = ev
	var seatState *race.StateEvent
	switch e := ev.(type) {
	case *race.BoardEvent:
		if shared := encodeShared(e); shared != nil {
			m = shared
		}
	case *lobby.LobbyEvent:
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.racing {
			c.heldLobby = e
			return false, false
		}
		return c.pushLocked(e)
	case *race.StateEvent:
		if e.Seat != nil { // this connection's own seat
			seatState = e
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	start, drop = c.pushLocked(m)
	if seatState != nil {
		c.racing = !seatState.State.Over()
		if held := c.heldLobby; !c.racing && held != nil && !drop {
			c.heldLobby = nil
			more, overflow := c.pushLocked(held)
			start, drop = start || more, overflow
		}
	}
	return start, drop
}

// Flush writes what Queue queued, as Deliver would have (writeOnTheWay).
func (c *conn) Flush() { c.writeOnTheWay() }

// enqueue queues m for the client, and starts a writer unless one is
// writing or the reader will write it once done with its message.
func (c *conn) enqueue(m any) {
	c.mu.Lock()
	start, drop := c.pushLocked(m)
	c.mu.Unlock()
	c.afterPush(start, drop)
}

// pushLocked queues m with c.mu held; it reports whether
// a writer must be started and whether the queue overflowed, for
// afterPush once c.mu is released.
func (c *conn) pushLocked(m any) (start, drop bool) {
	if c.ctx.Err() != nil {
		return false, false
	}
	if len(c.queue) >= c.queueMax {
		return false, true
	}
	c.queue = append(c.queue, m)
	start = !c.writing && !c.reading
	if start {
		c.writing = true
	}
	return start, false
}

// afterPush drops a client whose queue overflowed, or starts the writer
// that pushLocked asked for.
func (c *conn) afterPush(start, drop bool) {
	if drop {
		if c.dropped.CompareAndSwap(false, true) {
			c.srv.Stats.SlowDropped.Add(1)
			c.cancel(errSlow)
		}
		return
	}
	if start {
		c.writeOnTheWay()
	}
}

// writeOnTheWay writes what is queued from the calling goroutine (the
// race's, for an opponent's update; the lobby's, for its heartbeat)
// without waiting: encoded and handed to the socket in one system call
// that takes what its buffer has room for. Only if something is left (a
// client that does not read, the close frame to send, more queued
// meanwhile) does a writer goroutine start to finish it. That keeps
// Deliver from blocking and spares a goroutine's start and wake-up per
// event. The caller owns the writing side (set writing).
func (c *conn) writeOnTheWay() {
	if c.cork == nil || c.cork.raw == nil {
		go c.writeQueued()
		return
	}
	c.mu.Lock()
	if c.ctx.Err() != nil || len(c.queue) == 0 {
		c.mu.Unlock()
		go c.writeQueued()
		return
	}
	batch := c.takeLocked()
	c.mu.Unlock()
	done, err := c.writeBatch(batch, false)
	c.mu.Lock()
	c.doneLocked(batch, err)
	rest := !done || err != nil || len(c.queue) > 0 || c.ctx.Err() != nil
	if !rest {
		c.writing = false
	}
	c.mu.Unlock()
	if err != nil {
		c.cancel(err)
	}
	if rest {
		go c.writeQueued() // flushes what the socket did not take first
	}
}

// pingFrame in the send queue is a ping for the writer to send.
type pingFrame struct{}

// ping queues a ping and sets the next.
func (c *conn) ping() {
	c.enqueue(pingFrame{})
	c.mu.Lock()
	if c.ctx.Err() == nil {
		c.pingT.Reset(pingPeriod)
	}
	c.mu.Unlock()
}

// writeQueued writes the send queue until it is empty, in batches of what
// was queued at once; the caller owns the writing side (set writing). Once
// the connection is closing it sends the close frame and closes the
// websocket instead, and keeps the writing side for good. What a write on
// the way left in the cork goes first.
func (c *conn) writeQueued() {
	if c.cork != nil {
		if err := c.cork.flush(); err != nil {
			c.mu.Lock()
			c.failedLocked(fmt.Errorf("write: %w", err))
			c.mu.Unlock()
			c.cancel(err)
		}
	}
	for {
		c.mu.Lock()
		if c.ctx.Err() != nil {
			c.mu.Unlock()
			c.finish()
			return
		}
		if len(c.queue) == 0 {
			c.writing = false
			c.mu.Unlock()
			return
		}
		batch := c.takeLocked()
		c.mu.Unlock()
		_, err := c.writeBatch(batch, true)
		c.mu.Lock()
		c.doneLocked(batch, err)
		c.mu.Unlock()
		if err != nil {
			c.cancel(err)
		}
	}
}

// takeLocked takes what is queued as one batch, the last batch's slice
// becoming the queue; c.mu held.
func (c *conn) takeLocked() []any {
	batch := c.queue
	c.queue, c.spare = c.spare, nil
	return batch
}

// doneLocked keeps a written batch's slice for the next and the first
// write error; c.mu held.
func (c *conn) doneLocked(batch []any, err error) {
	clear(batch)
	c.spare = batch[:0]
	c.failedLocked(err)
}

// failedLocked keeps err (if any) as the connection's write error, unless
// an earlier one is kept already; c.mu held.
func (c *conn) failedLocked(err error) {
	if err != nil && c.werr == nil {
		c.werr = err
	}
}

// closeSoon runs once the connection's context is done: it closes the
// websocket now if nobody is writing, or leaves that to the writer.
func (c *conn) closeSoon() {
	c.mu.Lock()
	busy := c.writing
	c.writing = true
	c.mu.Unlock()
	if !busy {
		c.finish()
	}
}

// finish sends the close frame for the context's cause and closes the
// websocket, which ends the reader; once per connection, by the goroutine
// that owns the writing side. On shutdown the messages still queued go
// first; otherwise they are dropped (the client left, was too slow, or
// was replaced).
func (c *conn) finish() {
	c.mu.Lock()
	c.pingT.Stop()
	var rest []any
	if errors.Is(context.Cause(c.ctx), errShutdown) {
		// The server is going away: what was queued before (the drained
		// races' final states) is sent before the close frame.
		rest, c.queue = c.queue, nil
	}
	c.mu.Unlock()
	if len(rest) > 0 {
		_, _ = c.writeBatch(rest, true)
	}
	code, text := closeFor(context.Cause(c.ctx))
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(writeWait))
	_ = c.ws.Close()
	close(c.closed)
}

// encode is the protocol message for m in a new slice.
func encode(m any) ([]byte, error) { return appendMessage(nil, m) }

// writeBufs recycle the slices messages are encoded into: gorilla copies
// a message out before WriteMessage returns, so one slice serves every
// message of every connection in turn.
var writeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuf keeps the rare huge message's slice out of the pool.
const maxPooledBuf = 64 << 10

// writeBatch writes the messages queued together, corked: one system call
// for all of them. A "replaced" event is the last a connection sends.
// With wait false it does not wait for the socket: done is false if some
// of the batch is still in the cork, for writeQueued's flush.
func (c *conn) writeBatch(batch []any, wait bool) (done bool, err error) {
	deadline := time.Now().Add(writeWait)
	_ = c.ws.SetWriteDeadline(deadline)
	if c.cork != nil {
		c.cork.hold()
	}
	for _, m := range batch {
		if err = c.write(m, deadline); err != nil {
			break
		}
		if _, ok := m.(*race.ReplacedEvent); ok {
			c.cancel(errReplaced)
			break
		}
	}
	done = true
	if c.cork != nil {
		var ferr error
		if wait {
			ferr = c.cork.flush()
		} else {
			done, ferr = c.cork.tryFlush()
		}
		if ferr != nil && err == nil {
			err = fmt.Errorf("write: %w", ferr)
		}
	}
	return done, err
}

// write encodes and writes one message (through the cork, if held).
func (c *conn) write(m any, deadline time.Time) error {
	switch m := m.(type) {
	case pingFrame:
		if err := c.ws.WriteControl(websocket.PingMessage, nil, deadline); err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		return nil
	case *encoded:
		if err := c.ws.WriteMessage(websocket.TextMessage, m.b); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	bp := writeBufs.Get().(*[]byte)
	b, err := appendMessage((*bp)[:0], m)
	if err == nil {
		if err = c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
			err = fmt.Errorf("write: %w", err)
		}
	}
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		writeBufs.Put(bp)
	}
	return err
}

func (c *conn) readLoop(ctx context.Context) error {
	c.ws.SetReadLimit(hardReadLimit)
	c.readSet = time.Now()
	_ = c.ws.SetReadDeadline(c.readSet.Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		c.extendRead(time.Now())
		return nil
	})
	for {
		_, r, err := c.ws.NextReader()
		if err == nil {
			var more bool
			more, err = c.readOne(r)
			if err == nil && !more {
				return nil
			}
		}
		if err != nil {
			if ctx.Err() != nil || isNormalClose(err) {
				return nil
			}
			return fmt.Errorf("read: %w", err)
		}
	}
}

// readDeadlineSlack is how stale the read deadline may grow before a
// message or pong pushes it back: setting it on every message was a
// timer update each (about 1.5% of a load run's CPU), and pongWait less
// a second is still far more than pingPeriod.
const readDeadlineSlack = time.Second

// extendRead pushes the read deadline back to pongWait from now, at most
// once every readDeadlineSlack; by the reader goroutine.
func (c *conn) extendRead(now time.Time) {
	if now.Sub(c.readSet) < readDeadlineSlack {
		return
	}
	c.readSet = now
	_ = c.ws.SetReadDeadline(now.Add(pongWait))
}

// readBufs hold one client message each while it is read and handled, so
// that an idle connection holds none.
var readBufs = sync.Pool{New: func() any { b := make([]byte, maxMessageSize+1); return &b }}

// readOne reads and handles one message; more is false when the
// connection must end (a flood).
func (c *conn) readOne(r io.Reader) (more bool, err error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	tooLarge := n > maxMessageSize
	if tooLarge {
		_, err = io.Copy(io.Discard, r)
	} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		return false, err
	}
	c.extendRead(time.Now())
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	defer c.writeOwn()
	if !c.limiter.Allow() {
		c.srv.Stats.RateLimited.Add(1)
		c.strikes++
		if c.strikes >= c.srv.deps.Limits.FloodStrikes {
			c.srv.Stats.Flooded.Add(1)
			c.log.Warn().Msg("closing a flooding client")
			c.cancel(errFlood)
			return false, nil
		}
		c.enqueue(newError("", CodeRateLimited, "too many messages; slow down"))
		return true, nil
	}
	c.strikes = 0
	if tooLarge {
		c.enqueue(newError("", CodeTooLarge, "messages are at most %d bytes", maxMessageSize))
		return true, nil
	}
	c.handle(buf[:n])
	return true, nil
}

// writeOwn ends the reader's handling of a message: it writes what was
// queued meanwhile (the replies to the message, and whatever else came),
// unless a writer is at it already.
func (c *conn) writeOwn() {
	c.mu.Lock()
	c.reading = false
	own := !c.writing && len(c.queue) > 0
	if own {
		c.writing = true
	}
	c.mu.Unlock()
	if own {
		c.writeQueued()
	}
}

func isNormalClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived)
}

// handle answers one client message.
func (c *conn) handle(data []byte) {
	var m clientMsg
	if err := decodeClientMsg(data, &m); err != nil {
		c.enqueue(newError("", CodeBadJSON, "the message is not a JSON object of the protocol: %v", err))
		return
	}
	if m.V != ProtocolVersion {
		c.enqueue(newError(m.ID, CodeBadVersion, "this server speaks protocol version %d (\"v\":%d)", ProtocolVersion, ProtocolVersion))
		return
	}
	switch m.Type {
	case "join":
		c.join(m)
	case "resume":
		c.resume(m)
	case "watch":
		c.watch(m)
	case "move":
		if c.playable(m) {
			start := time.Now()
			err := c.race.Move(c.seat, m.Move, m.ID)
			c.srv.observeMove(time.Since(start), err)
			if err != nil {
				c.enqueue(raceError(m.ID, err))
			}
		}
	case "resign":
		if c.playable(m) {
			if err := c.race.Resign(c.seat, m.ID); err != nil {
				c.enqueue(raceError(m.ID, err))
			}
		}
	case "rematch":
		if c.playable(m) {
			if _, err := c.race.Rematch(c.seat); err != nil {
				c.enqueue(raceError(m.ID, err))
			}
		}
	case "berserk":
		if c.playable(m) {
			if err := c.race.Berserk(c.seat); err != nil {
				c.enqueue(raceError(m.ID, err))
			} else {
				c.enqueue(&pongMsg{V: ProtocolVersion, Type: "berserked", ID: m.ID})
			}
		}
	case "ping":
		c.enqueue(&pongMsg{V: ProtocolVersion, Type: "pong", ID: m.ID})
	default:
		if c.handleLobby(m) {
			return
		}
		c.enqueue(newError(m.ID, CodeUnknownType, "unknown message type %q", m.Type))
	}
}

func (c *conn) playable(m clientMsg) bool {
	switch c.role {
	case rolePlayer:
		return true
	case roleSpectator:
		c.enqueue(newError(m.ID, CodeSpectatorCannotMove, "spectators cannot move or resign"))
	default:
		c.enqueue(newError(m.ID, CodeNotJoined, "join or resume a race first"))
	}
	return false
}

// lookup finds the race for a join, resume or watch, or replies an error.
func (c *conn) lookup(m clientMsg) race.Handle {
	if c.role != roleNone {
		if !c.race.State().Over() {
			c.enqueue(newError(m.ID, CodeAlreadyJoined, "this connection is already in race %s", c.race.ID()))
			return nil
		}
		c.leave() // the race is over: the connection may go on to another
	}
	r, err := c.srv.deps.Races.Open(c.ctx, m.Race)
	if err != nil {
		c.enqueue(raceError(m.ID, err))
		return nil
	}
	return r
}

func (c *conn) join(m clientMsg) {
	r := c.lookup(m)
	if r == nil {
		return
	}
	name, seatToken, err := c.srv.deps.Seats.AuthorizeSeat(c.playerToken, r.ID(), m.Name)
	if err != nil {
		var re *race.Error
		if errors.As(err, &re) {
			c.enqueue(raceError(m.ID, re))
			return
		}
		c.enqueue(newError(m.ID, CodeForbidden, "you may not take a seat in this race: %v", err))
		return
	}
	if seatToken != "" { // a seat the lobby reserved for this player
		t, err := r.Resume(seatToken, c.playerID(), m.ID, c) // the race sends "joined", then "state"
		if err != nil {
			c.enqueue(raceError(m.ID, err))
			return
		}
		c.becomePlayer(r, t.Seat)
		return
	}
	t, err := r.Join(name, m.ID, c) // the race sends "joined", then "state"
	if err != nil {
		c.enqueue(raceError(m.ID, err))
		return
	}
	c.becomePlayer(r, t.Seat)
}

func (c *conn) resume(m clientMsg) {
	r := c.lookup(m)
	if r == nil {
		return
	}
	// A seat the lobby reserved resumes only for its player, who said
	// hello on this connection; the race sends "joined" with the seat's
	// new token (the one sent is spent), then "state".
	t, err := r.Resume(m.Token, c.playerID(), m.ID, c)
	if err != nil {
		c.enqueue(raceError(m.ID, err))
		return
	}
	c.becomePlayer(r, t.Seat)
}

// playerID is the lobby's player id of the connection, once it said
// hello; "" before, and on servers without a lobby.
func (c *conn) playerID() string {
	if c.session == nil {
		return ""
	}
	return c.session.Player().ID
}

func (c *conn) becomePlayer(r race.Handle, s int) {
	c.role, c.race, c.seat = rolePlayer, r, s
	c.log = c.log.With().Str("race", r.ID()).Int("seat", s).Logger()
	c.log.Debug().Msg("seated")
}

func (c *conn) watch(m clientMsg) {
	if c.role == roleSpectator && c.race.ID() == m.Race {
		// The same race again: a spectator who saw a gap in the versions
		// asks for a fresh state. Events published before it reached this
		// connection's queue first; the state carries the feed's version.
		c.unwatch()
		c.enqueue(&watchingMsg{V: ProtocolVersion, Type: "watching", ID: m.ID, Race: c.race.ID()})
		c.unwatch = c.race.Watch(c)
		return
	}
	r := c.lookup(m)
	if r == nil {
		return
	}
	c.role, c.race = roleSpectator, r
	c.enqueue(&watchingMsg{V: ProtocolVersion, Type: "watching", ID: m.ID, Race: r.ID()})
	c.unwatch = r.Watch(c) // sends "state" first
	c.log = c.log.With().Str("race", r.ID()).Str("seat", "spectator").Logger()
}

package redislobby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"sirtommy/lobby"
)

// Room is the key of the room with code.
func (k Keys) Room(code string) string { return k.lobbyStem() + ":room:" + code }

// roomChangeTries bounds the tries of one Change when other instances
// change the room at the same time: each try that loses sees the winner's
// room.
const roomChangeTries = 20

// Rooms is lobby.Rooms shared in Redis: a key per room (its JSON) that
// expires when nobody changed the room for its keep; a change reads and
// writes it in one optimistic transaction (WATCH), tried again when
// another instance changed it in between.
type Rooms struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ lobby.Rooms = (*Rooms)(nil)

// NewRooms shares rooms on rdb.
func NewRooms(rdb redis.UniversalClient, keys Keys) *Rooms {
	return &Rooms{rdb: rdb, keys: keys}
}

// Put stores a new room for keep.
func (s *Rooms) Put(ctx context.Context, r lobby.Room, keep time.Duration) error {
	js, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("redislobby: room: %w", err)
	}
	if err := s.rdb.Set(ctx, s.keys.Room(r.Code), js, keep).Err(); err != nil {
		return fmt.Errorf("redislobby: room: %w", err)
	}
	return nil
}

// Make stores r unless a room has its code (SET NX).
func (s *Rooms) Make(ctx context.Context, r lobby.Room, keep time.Duration) (bool, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("redislobby: room: %w", err)
	}
	made, err := s.rdb.SetNX(ctx, s.keys.Room(r.Code), js, keep).Result()
	if err != nil {
		return false, fmt.Errorf("redislobby: room: %w", err)
	}
	return made, nil
}

// Get finds room code.
func (s *Rooms) Get(ctx context.Context, code string) (lobby.Room, bool, error) {
	return s.get(ctx, s.rdb, code)
}

// GetMany finds the rooms of codes with one MGET: their keys share the
// lobby's hash tag, so one slot holds them all in Redis Cluster too.
func (s *Rooms) GetMany(ctx context.Context, codes []string) (map[string]lobby.Room, error) {
	found := make(map[string]lobby.Room, len(codes))
	if len(codes) == 0 {
		return found, nil
	}
	keys := make([]string, len(codes))
	for i, code := range codes {
		keys[i] = s.keys.Room(code)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("redislobby: rooms: %w", err)
	}
	for i, v := range vals {
		js, ok := v.(string)
		if !ok {
			continue // nil: no such key
		}
		var r lobby.Room
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			return nil, fmt.Errorf("redislobby: room %s: %w", codes[i], err)
		}
		found[codes[i]] = r
	}
	return found, nil
}

func (s *Rooms) get(ctx context.Context, c redis.Cmdable, code string) (lobby.Room, bool, error) {
	js, err := c.Get(ctx, s.keys.Room(code)).Bytes()
	if errors.Is(err, redis.Nil) {
		return lobby.Room{}, false, nil
	}
	if err != nil {
		return lobby.Room{}, false, fmt.Errorf("redislobby: room %s: %w", code, err)
	}
	var r lobby.Room
	if err := json.Unmarshal(js, &r); err != nil {
		return lobby.Room{}, false, fmt.Errorf("redislobby: room %s: %w", code, err)
	}
	return r, true, nil
}

// Change applies change to room code in a transaction on its key.
func (s *Rooms) Change(ctx context.Context, code string, keep time.Duration, change func(*lobby.Room) error) (lobby.Room, bool, error) {
	key := s.keys.Room(code)
	var out lobby.Room
	var found bool
	var refused error
	tx := func(t *redis.Tx) error {
		r, ok, err := s.get(ctx, t, code)
		if err != nil || !ok {
			found = false
			return err
		}
		found = true
		if refused = change(&r); refused != nil {
			return nil
		}
		out = r
		_, err = t.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if len(r.Members) == 0 {
				p.Del(ctx, key)
				return nil
			}
			js, err := json.Marshal(r)
			if err != nil {
				return err
			}
			p.Set(ctx, key, js, keep)
			return nil
		})
		return err
	}
	for range roomChangeTries {
		err := s.rdb.Watch(ctx, tx, key)
		switch {
		case errors.Is(err, redis.TxFailedErr):
			continue // another instance changed it: read it again
		case err != nil:
			return lobby.Room{}, false, fmt.Errorf("redislobby: change room %s: %w", code, err)
		case !found:
			return lobby.Room{}, false, nil
		case refused != nil:
			return lobby.Room{}, true, refused
		}
		return out, true, nil
	}
	return lobby.Room{}, false, fmt.Errorf("redislobby: change room %s: %d tries lost to other changes", code, roomChangeTries)
}

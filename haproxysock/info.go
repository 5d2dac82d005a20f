package haproxysock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Info identifies a running worker, from "show info".
type Info struct {
	// PID is the worker's process ID.
	PID int
	// Version is HAProxy's version string, e.g. "3.4.7-1".
	Version string
	// StartTime is when the worker started (Start_time_sec, or the
	// receive time minus Uptime_sec on versions without it).
	StartTime time.Time
	// Uptime is the worker's age when it answered.
	Uptime time.Duration
	// Fields holds every "Name: value" line of the reply.
	Fields map[string]string
}

// ParseInfo parses a "show info" reply.
func ParseInfo(reply string) (Info, error) {
	info := Info{Fields: map[string]string{}}
	for _, l := range strings.Split(reply, "\n") {
		l = strings.TrimRight(l, "\r")
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		info.Fields[k] = strings.TrimSpace(v)
	}
	pid, err := strconv.Atoi(info.Fields["Pid"])
	if err != nil || pid <= 0 {
		return Info{}, fmt.Errorf("%w: show info without a valid Pid (%q)", ErrProtocol, info.Fields["Pid"])
	}
	info.PID = pid
	info.Version = info.Fields["Version"]
	if info.Version == "" {
		return Info{}, fmt.Errorf("%w: show info without Version", ErrProtocol)
	}
	up, err := strconv.ParseInt(info.Fields["Uptime_sec"], 10, 64)
	if err != nil || up < 0 {
		return Info{}, fmt.Errorf("%w: show info with invalid Uptime_sec %q", ErrProtocol, info.Fields["Uptime_sec"])
	}
	info.Uptime = time.Duration(up) * time.Second
	if s, err := strconv.ParseInt(info.Fields["Start_time_sec"], 10, 64); err == nil && s > 0 {
		info.StartTime = time.Unix(s, 0)
	}
	return info, nil
}

// Info runs "show info" and returns the worker's identity. When
// Start_time_sec is missing, StartTime is derived from the uptime.
func (c *Client) Info(ctx context.Context) (Info, error) {
	res, err := c.Run(ctx, ShowInfo())
	if err != nil {
		return Info{}, err
	}
	info, err := ParseInfo(res[0].Reply)
	if err != nil {
		return Info{}, err
	}
	if info.StartTime.IsZero() {
		info.StartTime = time.Now().Add(-info.Uptime).Truncate(time.Second)
	}
	return info, nil
}

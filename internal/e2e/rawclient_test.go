package e2e_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// rawClient sends HTTP/1.1 requests on keep-alive connections it writes
// itself, one connection per worker, with no retry of any kind: Go's
// http.Transport resends an idempotent request that met a closed reused
// connection, which would hide exactly the failures this client counts.
//
// Every request is either answered (2xx counts as served, anything else
// as a failure "status N") or a failure of one kind: the dial, the write,
// an EOF before the first byte of the answer (on a reused or a new
// connection) or another read error. A connection the server closed
// between two requests is not a failure: before it reuses a connection the
// client looks for the server's FIN, as a well-behaved client does, and
// dials anew (counted as a clean close). A response with "Connection:
// close" ends its connection after the body (counted too).
type rawClient struct {
	addr, host string
	// pace is the pause after each request.
	pace time.Duration
	// maxRequests bounds each worker.
	maxRequests int

	mu          sync.Mutex // guards the fields below
	served      int
	failures    map[string]int
	examples    []string
	cleanCloses int
	connCloses  int
	dials       int
	byMethod    map[string]int
	pods        map[string]int

	wg   sync.WaitGroup
	stop chan struct{}
}

// startRawClient starts workers workers against addr (host:port) with
// Host host, alternating GET and POST with a body, each pausing pace after
// each request, until end.
func startRawClient(addr, host string, workers int, pace time.Duration) *rawClient {
	c := &rawClient{addr: addr, host: host, pace: pace, maxRequests: 40000,
		failures: map[string]int{}, byMethod: map[string]int{}, pods: map[string]int{}, stop: make(chan struct{})}
	for w := range workers {
		c.wg.Go(func() { c.work(w) })
	}
	return c
}

// end stops the workers and waits for them.
func (c *rawClient) end() {
	close(c.stop)
	c.wg.Wait()
}

// failed is the number of failed requests.
func (c *rawClient) failed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.failures {
		n += v
	}
	return n
}

// summary is one line of counts: served, failed by kind, clean closes.
func (c *rawClient) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	kinds := make([]string, 0, len(c.failures))
	for k, v := range c.failures {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, v))
	}
	slices.Sort(kinds)
	fail := 0
	for _, v := range c.failures {
		fail += v
	}
	return fmt.Sprintf("%d served (GET %d, POST %d), %d failed {%s}, %d connections, %d closed cleanly by the server between requests, %d ended by Connection: close, %d pods answered",
		c.served, c.byMethod["GET"], c.byMethod["POST"], fail, strings.Join(kinds, ", "), c.dials, c.cleanCloses, c.connCloses, len(c.pods))
}

func (c *rawClient) fail(kind, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures[kind]++
	if len(c.examples) < 10 {
		c.examples = append(c.examples, time.Now().Format("15:04:05.000")+" "+kind+": "+detail)
	}
}

func (c *rawClient) work(w int) {
	var conn net.Conn
	var br *bufio.Reader
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	for i := 0; i < c.maxRequests; i++ {
		select {
		case <-c.stop:
			return
		default:
		}
		if conn != nil && closedByServer(conn, br) {
			_ = conn.Close()
			conn = nil
			c.mu.Lock()
			c.cleanCloses++
			c.mu.Unlock()
		}
		reused := conn != nil
		if conn == nil {
			var err error
			conn, err = net.DialTimeout("tcp", c.addr, 2*time.Second)
			c.mu.Lock()
			c.dials++
			c.mu.Unlock()
			if err != nil {
				conn = nil
				c.fail("dial", err.Error())
				c.pause()
				continue
			}
			br = bufio.NewReader(conn)
		}
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPost
		}
		keep, err := c.roundTrip(conn, br, method, w, i, reused)
		if err != nil || !keep {
			_ = conn.Close()
			conn = nil
		}
		c.pause()
	}
}

// pause waits c.pace, or less when the client is ended.
func (c *rawClient) pause() {
	t := time.NewTimer(c.pace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.stop:
	}
}

// roundTrip sends one request on conn and reads its answer. It reports
// whether the connection may carry the next request.
func (c *rawClient) roundTrip(conn net.Conn, br *bufio.Reader, method string, w, i int, reused bool) (bool, error) {
	on := "new connection"
	if reused {
		on = "reused connection"
	}
	var req string
	if method == http.MethodPost {
		body := fmt.Sprintf(`{"worker":%d,"request":%d,"note":"not idempotent"}`, w, i)
		req = fmt.Sprintf("POST /orders HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", c.host, len(body), body)
	} else {
		req = fmt.Sprintf("GET /items?w=%d&i=%d HTTP/1.1\r\nHost: %s\r\n\r\n", w, i, c.host)
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		c.fail("write error on a "+on, err.Error())
		return false, err
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		kind := "read error on a " + on
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			kind = "EOF before the response on a " + on
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			kind = "no response within 5 s on a " + on
		}
		c.fail(kind, fmt.Sprintf("%s: %v", method, err))
		return false, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		c.fail("body cut on a "+on, fmt.Sprintf("%s: %v", method, err))
		return false, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		c.fail(fmt.Sprintf("status %d", resp.StatusCode), fmt.Sprintf("%s: %q", method, b))
	} else {
		var echo struct {
			Pod string `json:"pod"`
		}
		_ = json.Unmarshal(b, &echo)
		c.mu.Lock()
		c.served++
		c.byMethod[method]++
		c.pods[echo.Pod]++
		c.mu.Unlock()
	}
	if resp.Close {
		c.mu.Lock()
		c.connCloses++
		c.mu.Unlock()
		return false, nil
	}
	return true, nil
}

// closedByServer reports whether the server closed conn (or sent
// something unasked) while it was idle: it waits a millisecond for a byte.
func closedByServer(conn net.Conn, br *bufio.Reader) bool {
	_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := br.Peek(1)
	_ = conn.SetReadDeadline(time.Time{})
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

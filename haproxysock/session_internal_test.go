package haproxysock

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzPromptReader: however the bytes arrive (chunk sizes), however
// little room each read gets (buffer compaction and growth) and however
// the prompts are asked for across calls (batches on one session), the
// reader returns exactly the text between consecutive prompts, keeps the
// unterminated rest for the next call, and reports the end of the
// connection as ErrProtocol.
func FuzzPromptReader(f *testing.F) {
	f.Add("\n> \n> 3.4.7-1\n> ", uint8(1), uint8(0), uint8(0))
	f.Add("[3]: entry not found.\n> New server registered.\n> \n> 3.0.11\n> ", uint8(3), uint8(2), uint8(1))
	f.Add("+ + \n> \n> \n\n> > >\n> x", uint8(2), uint8(1), uint8(4))
	f.Add(strings.Repeat("0x55d0 h.example.test be_app\n", 300)+"\n> 3.2.26\n> ", uint8(200), uint8(31), uint8(0))
	f.Fuzz(func(t *testing.T, data string, chunk, room, per uint8) {
		want := strings.Split(data, "\n> ")
		prompts := len(want) - 1
		server, client := socketPair(t)
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer server.Close()
			step := int(chunk) + 1
			for i := 0; i < len(data); i += step {
				if _, err := server.Write([]byte(data[i:min(i+step, len(data))])); err != nil {
					return
				}
			}
		}()
		defer func() { client.Close(); <-done }()
		dl := deadliner{ctx: context.Background(), conn: client, timeout: 5 * time.Second}
		p := promptReader{room: int(room%32) + 1}
		var got []string
		for len(got) < prompts {
			n := min(int(per%5)+1, prompts-len(got))
			segs, err := p.read(dl, client, n, 0)
			if err != nil {
				t.Fatalf("read %d prompts after %d: %v", n, len(got), err)
			}
			if len(segs) != n {
				t.Fatalf("read %d prompts, got %d", n, len(segs))
			}
			got = append(got, segs...)
		}
		if diff := cmp.Diff(want[:prompts], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("segments (-want +got):\n%s", diff)
		}
		segs, err := p.read(dl, client, 1, 0)
		if !errors.Is(err, ErrProtocol) || len(segs) != 0 {
			t.Fatalf("read past the last prompt = %q, %v; want ErrProtocol", segs, err)
		}
		if rest := string(p.buf[p.start:]); rest != want[prompts] {
			t.Fatalf("unterminated rest %q, want %q", rest, want[prompts])
		}
	})
}

// socketPair returns two connected unix stream sockets: the framing of a
// real socket, with no listener.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

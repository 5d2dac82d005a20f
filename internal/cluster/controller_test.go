package cluster

import "testing"

func TestPprofServesOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "198.18.0.1:0", "example.com:80"} {
		if stop, err := servePprof(addr); err == nil {
			stop()
			t.Errorf("pprof served on %s", addr)
		}
	}
	stop, err := servePprof("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop()
}

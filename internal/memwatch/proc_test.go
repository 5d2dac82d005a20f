package memwatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatusReadsRSSAndPeakInBytes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Resident
		wantErr bool
	}{
		{name: "a process", in: "Name:\thaptic\nVmPeak:\t 2000000 kB\nVmHWM:\t  108224 kB\nVmRSS:\t   75012 kB\nRssAnon:\t   45000 kB\nRssFile:\t   30012 kB\nThreads:\t12\n", want: Resident{RSS: 75012 << 10, Peak: 108224 << 10, Anon: 45000 << 10}},
		{name: "a high-water mark below the resident set is raised to it", in: "VmHWM:\t 900 kB\nVmRSS:\t 1000 kB\n", want: Resident{RSS: 1000 << 10, Peak: 1000 << 10}},
		{name: "a kernel without RssAnon", in: "VmHWM:\t 2 kB\nVmRSS:\t 1 kB\n", want: Resident{RSS: 1 << 10, Peak: 2 << 10}},
		{name: "a kernel thread has neither", in: "Name:\tkthreadd\nState:\tS (sleeping)\n", wantErr: true},
		{name: "only one of them", in: "VmRSS:\t 1 kB\n", wantErr: true},
		{name: "a unit other than kB", in: "VmHWM:\t 1 MB\nVmRSS:\t 1 kB\n", wantErr: true},
		{name: "not a number", in: "VmHWM:\t x kB\nVmRSS:\t 1 kB\n", wantErr: true},
		{name: "negative", in: "VmHWM:\t -1 kB\nVmRSS:\t 1 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatus: err %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadThisProcessHasAPeakAtLeastItsRSS(t *testing.T) {
	r, err := Read(0)
	if err != nil {
		t.Fatal(err)
	}
	if r.RSS <= 0 || r.Peak < r.RSS || r.Anon <= 0 || r.Anon > r.RSS {
		t.Errorf("Read(0) = %+v: want 0 < Anon <= RSS <= Peak", r)
	}
}

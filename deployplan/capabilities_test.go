package deployplan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/deployplan"
)

func TestCapabilitiesForEachSeries(t *testing.T) {
	v30 := deployplan.Capabilities{Series: "3.0", DelMapDeletesAllDuplicates: true}
	v32 := deployplan.Capabilities{Series: "3.2", ServerInitState: true, DelMapDeletesAllDuplicates: true, Echo: true}
	v34 := deployplan.Capabilities{Series: "3.4", DynamicBackends: true, ServerInitState: true, LargePayloads: true, Echo: true}
	tests := []struct {
		version string
		want    deployplan.Capabilities
	}{
		{"3.0", v30}, {"3.0.11-1+deb13u4", v30}, {"3.1.2", v30},
		{"3.2", v32}, {"3.2.26-1", v32}, {"3.3-dev1", v32},
		{"3.4", v34}, {"3.4.7-1", v34}, {"3.5.0", v34}, {"4.0", v34}, {" 3.4.7 ", v34},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got, err := deployplan.CapabilitiesFor(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapabilitiesForRejectsOldAndUnparseableVersions(t *testing.T) {
	for _, v := range []string{"", "2.8.5", "3", "3.", "x.4", "3.x", "latest", "-1.4", "3.123456"} {
		if c, err := deployplan.CapabilitiesFor(v); err == nil {
			t.Errorf("CapabilitiesFor(%q) = %+v, want an error", v, c)
		}
	}
}

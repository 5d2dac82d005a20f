package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
)

// Only ops whose neighbours cannot hurt traffic when one fails share a
// round trip: the building of a backend the apply adds, consecutive map
// upserts, consecutive map deletes. Server changes on a serving backend,
// map replaces, certificates and deletes run alone.
func TestOpBatchesGroupOnlyOpsThatMayRunPastARefusal(t *testing.T) {
	newBE := func(k agentapi.OpKind) agentapi.Op { return agentapi.Op{Kind: k, Backend: "be_new", Server: "s1"} }
	oldBE := func(k agentapi.OpKind) agentapi.Op { return agentapi.Op{Kind: k, Backend: "be_old", Server: "s1"} }
	mapOp := func(k agentapi.OpKind) agentapi.Op { return agentapi.Op{Kind: k, Map: "maps/hosts.map", Key: "k"} }
	for name, tc := range map[string]struct {
		ops  []agentapi.Op
		want [][2]int
	}{
		"none": {nil, nil},
		"route add": {
			[]agentapi.Op{
				newBE(agentapi.OpAddBackend), newBE(agentapi.OpAddServer), newBE(agentapi.OpSetServerState),
				newBE(agentapi.OpPublishBackend), mapOp(agentapi.OpAddMapEntry), mapOp(agentapi.OpAddMapEntry),
			},
			[][2]int{{0, 4}, {4, 6}},
		},
		"servers of a serving backend run alone": {
			[]agentapi.Op{
				oldBE(agentapi.OpSetServerState), oldBE(agentapi.OpSetServerAddr), oldBE(agentapi.OpSetServerState),
				oldBE(agentapi.OpAddServer), oldBE(agentapi.OpPublishBackend),
			},
			[][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}},
		},
		"a serving backend's op splits the new one's": {
			[]agentapi.Op{
				newBE(agentapi.OpAddBackend), oldBE(agentapi.OpSetServerWeight), newBE(agentapi.OpAddServer),
				newBE(agentapi.OpEnableHealth),
			},
			[][2]int{{0, 1}, {1, 2}, {2, 4}},
		},
		"map upserts and deletes batch apart": {
			[]agentapi.Op{
				mapOp(agentapi.OpAddMapEntry), mapOp(agentapi.OpSetMapEntry), mapOp(agentapi.OpReplaceMap),
				mapOp(agentapi.OpSetMapEntry), mapOp(agentapi.OpDelMapEntry), mapOp(agentapi.OpDelMapEntry),
			},
			[][2]int{{0, 2}, {2, 3}, {3, 4}, {4, 6}},
		},
		"certificates and deletes run alone": {
			[]agentapi.Op{
				{Kind: agentapi.OpNewCert}, {Kind: agentapi.OpSetCert}, {Kind: agentapi.OpCommitCert},
				oldBE(agentapi.OpUnpublishBackend), oldBE(agentapi.OpDelServer), oldBE(agentapi.OpDelBackend),
			},
			[][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}},
		},
		"a removed backend's ops run alone beside an added one": {
			[]agentapi.Op{
				newBE(agentapi.OpAddBackend), newBE(agentapi.OpPublishBackend),
				oldBE(agentapi.OpUnpublishBackend), oldBE(agentapi.OpDelServer), oldBE(agentapi.OpDelBackend),
			},
			[][2]int{{0, 2}, {2, 3}, {3, 4}, {4, 5}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, opBatches(tc.ops)); diff != "" {
				t.Errorf("batches (-want +got):\n%s", diff)
			}
		})
	}
}

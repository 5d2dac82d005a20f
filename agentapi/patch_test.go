package agentapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// lines returns n numbered lines, as a map or a config would have.
func lines(n int, prefix string) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%s%05d be_%05d\n", prefix, i, i)
	}
	return b.Bytes()
}

func TestMakePatchRebuildsTheBodyFromTheBase(t *testing.T) {
	base := lines(1000, "r")
	insertAt := bytes.Index(base, []byte("r00500"))
	cases := map[string]struct {
		body []byte
		pays bool
	}{
		"a line inserted in the middle": {append(append(append([]byte{}, base[:insertAt]...), "new.example.com be_new\n"...), base[insertAt:]...), true},
		"a line appended":               {append(append([]byte{}, base...), "z be_z\n"...), true},
		"a line prepended":              {append([]byte("a be_a\n"), base...), true},
		"a line removed":                {append(append([]byte{}, base[:insertAt]...), base[insertAt+len("r00500 be_00500\n"):]...), true},
		"the same body":                 {base, true},
		"a line changed at both ends":   {append(append([]byte("x"), base[1:len(base)-1]...), 'y'), false},
		"everything different":          {lines(1000, "s"), false},
		"a body below the minimum":      {[]byte("global\n"), false},
		"an empty body":                 {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pt, ok := agentapi.MakePatch(renderplan.DigestOf(base), base, tc.body)
			if ok != tc.pays {
				t.Fatalf("MakePatch pays = %v, want %v", ok, tc.pays)
			}
			if !ok {
				return
			}
			if pt.Base != renderplan.DigestOf(base) || pt.Size() != len(tc.body) {
				t.Errorf("patch base %s size %d, want %s and %d", pt.Base, pt.Size(), renderplan.DigestOf(base), len(tc.body))
			}
			got, err := pt.Apply(base)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Errorf("Apply made %d bytes that differ from the body of %d", len(got), len(tc.body))
			}
			if d, err := pt.Digest(base); err != nil || d != renderplan.DigestOf(tc.body) {
				t.Errorf("Digest = %s, %v; want the body's %s", d, err, renderplan.DigestOf(tc.body))
			}
		})
	}
}

func TestPatchApplyRefusesABaseTooShort(t *testing.T) {
	pt := agentapi.Patch{Base: renderplan.DigestString("x"), Prefix: 3, Suffix: 3, Literal: []byte("-")}
	if _, err := pt.Apply([]byte("abcde")); err == nil {
		t.Error("Apply on 5 bytes keeping 3+3 succeeded, want an error")
	}
	if _, err := pt.Digest([]byte("abcde")); err == nil {
		t.Error("Digest on 5 bytes keeping 3+3 succeeded, want an error")
	}
}

// patchedRequest is validRequest with haproxy.cfg as a large file sent as
// a patch of base.
func patchedRequest(t *testing.T) (*agentapi.ApplyRequest, []byte) {
	t.Helper()
	base := lines(500, "backend be_")
	body := append(append([]byte{}, base...), "backend be_new\n"...)
	req := validRequest()
	for i, f := range req.Files {
		if f.Path == renderplan.ConfigPath {
			req.Files[i] = manifestFile(f.Path, f.Kind, string(body))
		}
	}
	delete(req.Bodies, renderplan.ConfigPath)
	pt, ok := agentapi.MakePatch(renderplan.DigestOf(base), base, body)
	if !ok {
		t.Fatal("no patch")
	}
	req.Patches = map[string]agentapi.Patch{renderplan.ConfigPath: pt}
	return req, base
}

func TestClientSendsPatchesThatReachTheApplierIntact(t *testing.T) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-2", OK: true}}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	req, base := patchedRequest(t)
	if _, err := c.Apply(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := fake.applies[0]
	if diff := cmp.Diff(req, got); diff != "" {
		t.Errorf("request seen by the applier (-want +got):\n%s", diff)
	}
	body, err := got.Patches[renderplan.ConfigPath].Apply(base)
	if err != nil || renderplan.DigestOf(body) != req.Files[1].Digest {
		t.Errorf("the patch seen by the applier does not rebuild haproxy.cfg (err %v)", err)
	}
}

func TestInvalidPatchesAreRefusedBeforeTheApplier(t *testing.T) {
	cases := map[string]func(req *agentapi.ApplyRequest){
		"patch for an unlisted file": func(req *agentapi.ApplyRequest) {
			req.Patches["maps/other.map"] = req.Patches[renderplan.ConfigPath]
		},
		"body and patch for one file": func(req *agentapi.ApplyRequest) {
			req.Bodies[renderplan.ConfigPath] = []byte("global\n")
		},
		"patch that makes the wrong size": func(req *agentapi.ApplyRequest) {
			pt := req.Patches[renderplan.ConfigPath]
			pt.Suffix--
			req.Patches[renderplan.ConfigPath] = pt
		},
		"patch with a malformed base digest": func(req *agentapi.ApplyRequest) {
			pt := req.Patches[renderplan.ConfigPath]
			pt.Base = "NOTHEX"
			req.Patches[renderplan.ConfigPath] = pt
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "p", OK: true}}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			req, _ := patchedRequest(t)
			mutate(req)
			_, err := c.Apply(context.Background(), req)
			if !isDecodeNack(err) || tr.last() != http.StatusBadRequest {
				t.Fatalf("error = %v, status %d; want a decode nack and 400", err, tr.last())
			}
			if n := fake.calls(); n != 0 {
				t.Errorf("applier called %d times, want 0", n)
			}
			if err := req.Validate(agentapi.Limits{}); !isDecodeNack(err) {
				t.Errorf("Validate = %v, want a decode nack", err)
			}
		})
	}
}

func TestMalformedPatchLinesAreRefused(t *testing.T) {
	cfg := strings.Repeat("x", 100)
	manifest := fmt.Sprintf(`{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}]}`,
		renderplan.DigestString(cfg), len(cfg))
	base := renderplan.DigestString("base")
	for name, line := range map[string]string{
		"too few fields":           "haproxy.cfg\t" + string(base) + "\t10",
		"too many fields":          "haproxy.cfg\t" + string(base) + "\t10\t10\t10",
		"negative prefix":          "haproxy.cfg\t" + string(base) + "\t-1\t10",
		"prefix with leading zero": "haproxy.cfg\t" + string(base) + "\t010\t10",
		"keeps more than the size": "haproxy.cfg\t" + string(base) + "\t60\t60",
		"base not a digest":        "haproxy.cfg\tbase\t10\t10",
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "p", OK: true}}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			tr.rewrite = func() ([]byte, string) {
				return framed(manifest, rawPart{line, strings.Repeat("y", 80)}), agentapi.ContentTypeApply
			}
			_, err := c.Apply(context.Background(), validRequest())
			t.Logf("error: %v", err)
			if !isDecodeNack(err) || tr.last() != http.StatusBadRequest {
				t.Fatalf("error = %v, status %d; want a decode nack and 400", err, tr.last())
			}
			if n := fake.calls(); n != 0 {
				t.Errorf("applier called %d times, want 0", n)
			}
		})
	}
}

func TestClientSendsNoPatchesToAnAgentThatTakesOnlyMultipart(t *testing.T) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-2", OK: true}}
	old := &oldAgent{h: agentapi.NewHandler(fake, agentapi.HandlerOptions{Token: testToken})}
	c, _, _ := testServerFor(t, old)
	req, _ := patchedRequest(t)
	_, err := c.Apply(context.Background(), req)
	if !errors.Is(err, agentapi.ErrUnsupported) {
		t.Fatalf("error = %v, want ErrUnsupported", err)
	}
	if n := fake.calls(); n != 0 {
		t.Errorf("applier called %d times, want 0", n)
	}
}

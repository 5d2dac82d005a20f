package cluster

import (
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func metav1CreateOptions() metav1.CreateOptions { return metav1.CreateOptions{} }
func metav1DeleteOptions() metav1.DeleteOptions { return metav1.DeleteOptions{} }

// TestMain turns off client-go's streaming list for the fake clients of
// these unit tests, which do not send its closing bookmark; the real
// apiserver does.
func TestMain(m *testing.M) {
	_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}

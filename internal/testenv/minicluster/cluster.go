package minicluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config configures [Start]. Dir and Binaries are required.
type Config struct {
	// Dir receives the PKI, kubeconfigs, etcd data and process logs
	// (t.TempDir() in tests). Required.
	Dir string
	// Binaries locates etcd, kube-apiserver and kube-controller-manager.
	Binaries Binaries
	// Log receives progress messages; nil discards them.
	Log *slog.Logger
	// APIServerPort is the apiserver's secure port on 127.0.0.1; zero means 6443.
	// EtcdPort (client; peer is EtcdPort+1) zero means 2379, KCMPort zero
	// means 10257. The ports are fixed because the cluster runs in its own
	// network namespace.
	APIServerPort, EtcdPort, KCMPort int
	// ReadyTimeout bounds the wait for /readyz and the default
	// ServiceAccount; zero means 90 s.
	ReadyTimeout time.Duration
}

// Cluster is a running control plane. Its methods are safe for concurrent
// use; Stop may be called more than once.
type Cluster struct {
	// Server is the apiserver URL, https://127.0.0.1:<port>.
	Server string
	// Token is a static bearer token for user admin in system:masters.
	Token string
	// KubeconfigPath is an admin kubeconfig file (client certificate).
	KubeconfigPath string
	// PKI holds the CA and the kubelet's serving certificate.
	PKI *PKI
	// Started is how long Start took until the cluster was usable.
	Started time.Duration

	dir   string
	procs []*process // etcd, apiserver, kcm
}

func (c Config) withDefaults() (Config, error) {
	if c.Dir == "" {
		return c, errors.New("minicluster: Config.Dir is required")
	}
	if c.Binaries.Etcd == "" || c.Binaries.APIServer == "" || c.Binaries.ControllerManager == "" {
		return c, errors.New("minicluster: Config.Binaries must name etcd, kube-apiserver and kube-controller-manager")
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.APIServerPort == 0 {
		c.APIServerPort = 6443
	}
	if c.EtcdPort == 0 {
		c.EtcdPort = 2379
	}
	if c.KCMPort == 0 {
		c.KCMPort = 10257
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 90 * time.Second
	}
	return c, nil
}

// Start runs etcd, kube-apiserver and kube-controller-manager and returns once
// /readyz is ok and the default ServiceAccount exists. On error every
// process it started is stopped.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	pki, err := NewPKI(begin, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	files, err := pki.writeFiles(filepath.Join(cfg.Dir, "pki"))
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, fmt.Errorf("generate token: %w", err)
	}
	c := &Cluster{
		Server:         "https://127.0.0.1:" + strconv.Itoa(cfg.APIServerPort),
		Token:          hex.EncodeToString(tok),
		KubeconfigPath: filepath.Join(cfg.Dir, "admin.kubeconfig"),
		PKI:            pki,
		dir:            cfg.Dir,
	}
	tokens := filepath.Join(cfg.Dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(c.Token+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write token file: %w", err)
	}
	if err := writeKubeconfig(c.KubeconfigPath, c.Server, pki.CA.CertPEM, pki.Admin, ""); err != nil {
		return nil, err
	}
	kcmKubeconfig := filepath.Join(cfg.Dir, "kcm.kubeconfig")
	if err := writeKubeconfig(kcmKubeconfig, c.Server, pki.CA.CertPEM, pki.KCM, ""); err != nil {
		return nil, err
	}
	logDir := filepath.Join(cfg.Dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}

	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(cfg.EtcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(cfg.EtcdPort+1)
	if err := c.start(cfg, logDir, "etcd", cfg.Binaries.Etcd,
		"--name=minicluster", "--data-dir="+filepath.Join(cfg.Dir, "etcd-data"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=minicluster="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn"); err != nil {
		return nil, err
	}
	if err := c.start(cfg, logDir, "kube-apiserver", cfg.Binaries.APIServer,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(cfg.APIServerPort),
		// Required with a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file="+files.APIServerCert, "--tls-private-key-file="+files.APIServerKey,
		"--client-ca-file="+files.CACert, "--token-auth-file="+tokens,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+files.SAPub, "--service-account-signing-key-file="+files.SAKey,
		"--service-cluster-ip-range=10.96.0.0/16", "--authorization-mode=Node,RBAC",
		"--allow-privileged=true", "--profiling=false",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate="+files.AdminCert, "--kubelet-client-key="+files.AdminKey); err != nil {
		return nil, err
	}
	if err := c.waitReadyz(ctx, cfg); err != nil {
		return nil, err
	}
	cfg.Log.Info("kube-apiserver ready", "after", time.Since(begin))
	if err := c.start(cfg, logDir, "kube-controller-manager", cfg.Binaries.ControllerManager,
		"--kubeconfig="+kcmKubeconfig,
		"--authentication-kubeconfig="+kcmKubeconfig, "--authorization-kubeconfig="+kcmKubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(cfg.KCMPort), "--leader-elect=false",
		"--service-account-private-key-file="+files.SAKey, "--root-ca-file="+files.CACert,
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file="+files.CACert, "--cluster-signing-key-file="+files.CAKey,
		"--profiling=false"); err != nil {
		return nil, err
	}
	if err := c.waitDefaultServiceAccount(ctx, cfg); err != nil {
		return nil, err
	}
	c.Started = time.Since(begin)
	cfg.Log.Info("minicluster started", "server", c.Server, "took", c.Started)
	ok = true
	return c, nil
}

func (c *Cluster) start(cfg Config, logDir, name, bin string, args ...string) error {
	p, err := startProcess(name, logDir, bin, args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	cfg.Log.Debug("started", "process", name, "pid", p.cmd.Process.Pid)
	return nil
}

// poll calls f every interval until it returns true, an error, a process
// exits, or timeout passes.
func (c *Cluster) poll(ctx context.Context, what string, timeout time.Duration, f func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		for _, p := range c.procs {
			if err := p.exitError(); err != nil {
				return fmt.Errorf("wait for %s: %w", what, err)
			}
		}
		done, err := f(ctx)
		if done {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last == nil {
				return fmt.Errorf("wait for %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("wait for %s: %w (last error: %w)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) waitReadyz(ctx context.Context, cfg Config) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.PKI.CA.CertPEM)
	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	defer hc.CloseIdleConnections()
	return c.poll(ctx, "kube-apiserver /readyz", cfg.ReadyTimeout, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/readyz", nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("readyz: %s: %s", resp.Status, body)
		}
		return true, nil
	})
}

func (c *Cluster) waitDefaultServiceAccount(ctx context.Context, cfg Config) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return c.poll(ctx, "default ServiceAccount", cfg.ReadyTimeout, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// RESTConfig returns a client configuration for user admin (system:masters).
// Each call returns a new value.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.PKI.CA.CertPEM},
		QPS:             200,
		Burst:           400,
	}
}

// LogPath returns the log file of one control-plane process: "etcd",
// "kube-apiserver" or "kube-controller-manager".
func (c *Cluster) LogPath(name string) string {
	return filepath.Join(c.dir, "logs", name+".log")
}

// PIDs returns the process IDs of etcd, kube-apiserver and
// kube-controller-manager (those started), by name.
func (c *Cluster) PIDs() map[string]int {
	m := make(map[string]int, len(c.procs))
	for _, p := range c.procs {
		m[p.name] = p.cmd.Process.Pid
	}
	return m
}

// Stop kills the processes in reverse start order (SIGTERM, then SIGKILL
// after 5 s) and waits for them.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(5 * time.Second)
	}
}

// RSS returns the resident set size in bytes of each running control-plane
// process, read from /proc/<pid>/status.
func (c *Cluster) RSS() map[string]int64 {
	out := map[string]int64{}
	for name, pid := range c.PIDs() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil {
					out[name] = kb * 1024
				}
			}
		}
	}
	return out
}

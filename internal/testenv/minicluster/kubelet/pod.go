package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runningPod is a pod this kubelet started. Fields other than the
// containers and the start progress are set once by startPod; each
// container's state is guarded by its mu, and nextInit, containersStarted
// and failed are used by the Run goroutine only (see advance).
type runningPod struct {
	ns, name string
	uid      string
	dir      string
	net      podNet
	started  time.Time
	policy   corev1.RestartPolicy
	tmpfs    []string // the memory emptyDirs mounted, unmounted by stopPod

	// inits run one at a time, in order, each to a zero exit, before the
	// containers start.
	inits      []*container
	containers []*container

	nextInit          int  // index of the init container running or due
	containersStarted bool // every init container succeeded and the containers were started
	failed            bool // an init container failed under restartPolicy Never
}

// container is one process of a pod.
type container struct {
	name, image string
	binary      string
	args, env   []string
	dir         string // the process's working directory
	logPath     string
	readiness   readiness
	init        bool // an init container: runs to completion
	stopSignal  syscall.Signal
	binds       []bindMount // mounted for real in the container's mount namespace

	mu        sync.Mutex // guards the fields below
	cmd       *exec.Cmd
	done      chan struct{}
	startedAt time.Time
	exitedAt  time.Time
	exitCode  int
	exited    bool
	restarts  int32
	ready     bool
	logw      *logWriter
	logFile   *os.File
}

// startPod materialises volumes, makes the network and starts the first
// init container, or the containers when there is none (see advance). On
// error everything it made is undone.
func (k *Kubelet) startPod(ctx context.Context, pod *corev1.Pod) (rp *runningPod, err error) {
	specs := make([]corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	specs = append(append(specs, pod.Spec.InitContainers...), pod.Spec.Containers...)
	images := make([]Image, len(specs))
	for i, c := range specs {
		if images[i], err = k.cfg.Images.lookup(c.Image); err != nil {
			return nil, err
		}
	}
	ip, err := k.pool.allocate()
	if err != nil {
		return nil, err
	}
	idx := k.pool.index(ip)
	rp = &runningPod{
		ns: pod.Namespace, name: pod.Name, uid: string(pod.UID),
		dir:     filepath.Join(k.cfg.Dir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)),
		net:     newPodNet(idx, ip, k.pool.gateway()),
		started: k.cfg.Now(),
		policy:  pod.Spec.RestartPolicy,
	}
	defer func() {
		if err != nil {
			k.stopPod(context.WithoutCancel(ctx), rp)
		}
	}()
	mounts, binds, err := k.materializeVolumes(ctx, pod, rp, ip.String())
	if err != nil {
		return rp, err
	}
	svcEnv, err := k.serviceEnv(ctx)
	if err != nil {
		return rp, err
	}
	lookup := k.valueLookup(ctx, pod.Namespace)
	for i := range specs {
		init := i < len(pod.Spec.InitContainers)
		ct, err := newContainer(pod, &specs[i], images[i], ip.String(), mounts[specs[i].Name], lookup, rp.dir, svcEnv)
		if err != nil {
			return rp, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		ct.init = init
		ct.binds = binds[specs[i].Name]
		if init {
			rp.inits = append(rp.inits, ct)
		} else {
			rp.containers = append(rp.containers, ct)
		}
	}
	if err := os.MkdirAll(filepath.Join(rp.dir, "logs"), 0o755); err != nil {
		return rp, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err := rp.net.setup(ctx); err != nil {
		return rp, err
	}
	if err := rp.advance(k.cfg.Now); err != nil {
		return rp, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return rp, nil
}

// newContainer resolves one container of pod: its environment, its args
// ($(VAR) expanded, mount paths rewritten), its working directory and its
// readiness check. podDir is the working directory when the container
// names none. svcEnv ("NAME=value") comes before the container's own
// variables, which win, as the kubelet's service variables do.
func newContainer(pod *corev1.Pod, c *corev1.Container, image Image, podIP string, mounts []mountRewrite, lookup valueLookup, podDir string, svcEnv []string) (*container, error) {
	env, err := resolveEnv(pod, c, podIP, "127.0.0.1", lookup)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for j, e := range env {
		name, val, _ := cutEnv(e)
		val = rewriteMounts(val, mounts)
		env[j] = name + "=" + val
		vars[name] = val
	}
	binary, argv, err := image.entrypoint(c)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", c.Name, err)
	}
	args := make([]string, 0, len(argv))
	for _, a := range argv {
		args = append(args, rewriteMounts(expandVars(a, vars), mounts))
	}
	dir := podDir
	if c.WorkingDir != "" {
		if dir = rewriteMounts(c.WorkingDir, mounts); dir == c.WorkingDir {
			return nil, fmt.Errorf("container %s: workingDir %s is not inside a volume mount (the process kubelet has no image filesystem)", c.Name, c.WorkingDir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("container %s: workingDir: %w", c.Name, err)
		}
	}
	rd, err := readinessOf(c, image.ReadyPorts)
	if err != nil {
		return nil, err
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if len(image.Path) > 0 {
		path = strings.Join(image.Path, ":") + ":" + path
	}
	base := append([]string{"PATH=" + path, "HOME=/root"}, svcEnv...)
	return &container{
		name: c.Name, image: c.Image, binary: binary, args: args, dir: dir,
		env:        append(base, env...),
		logPath:    filepath.Join(podDir, "logs", c.Name+".log"),
		readiness:  rd,
		stopSignal: image.StopSignal,
	}, nil
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// valueLookup reads keys of Secrets and ConfigMaps in ns from the apiserver.
func (k *Kubelet) valueLookup(ctx context.Context, ns string) valueLookup {
	return func(kind, name, key string) (string, bool, error) {
		data, err := k.objectData(ctx, ns, kind, name)
		if err != nil || data == nil {
			return "", false, err
		}
		v, ok := data[key]
		return string(v), ok, nil
	}
}

// objectData returns the data of a Secret or ConfigMap, nil when absent.
func (k *Kubelet) objectData(ctx context.Context, ns, kind, name string) (map[string][]byte, error) {
	switch kind {
	case "Secret":
		s, err := k.cfg.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get secret %s/%s: %w", ns, name, err)
		}
		data := map[string][]byte{}
		for k, v := range s.Data {
			data[k] = v
		}
		for k, v := range s.StringData {
			data[k] = []byte(v)
		}
		return data, nil
	default:
		cm, err := k.cfg.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get configmap %s/%s: %w", ns, name, err)
		}
		data := map[string][]byte{}
		for k, v := range cm.Data {
			data[k] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			data[k] = v
		}
		return data, nil
	}
}

// materializeVolumes writes secret, configMap and emptyDir volumes (and,
// with Config.APIServer, projected ones) under rp.dir/volumes and
// returns, per container, the mount rewrites to apply and the bind
// mounts to make (see projectedBinds). An emptyDir of medium Memory is a
// tmpfs, which stopPod unmounts.
func (k *Kubelet) materializeVolumes(ctx context.Context, pod *corev1.Pod, rp *runningPod, podIP string) (map[string][]mountRewrite, map[string][]bindMount, error) {
	dir := rp.dir
	hostPaths := map[string]string{}
	projected := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		vdir := filepath.Join(dir, "volumes", v.Name)
		var (
			kind, name string
			items      []corev1.KeyToPath
			mode       int32 = 0o644
			optional   bool
		)
		switch {
		case v.Secret != nil:
			kind, name, items = "Secret", v.Secret.SecretName, v.Secret.Items
			optional = v.Secret.Optional != nil && *v.Secret.Optional
			if v.Secret.DefaultMode != nil {
				mode = *v.Secret.DefaultMode
			}
		case v.ConfigMap != nil:
			kind, name, items = "ConfigMap", v.ConfigMap.Name, v.ConfigMap.Items
			optional = v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
			if v.ConfigMap.DefaultMode != nil {
				mode = *v.ConfigMap.DefaultMode
			}
		case v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory:
			if err := mountMemoryVolume(vdir, v.EmptyDir.SizeLimit); err != nil {
				return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			rp.tmpfs = append(rp.tmpfs, vdir)
			hostPaths[v.Name] = vdir
			continue
		case v.EmptyDir != nil:
			if err := os.MkdirAll(vdir, 0o777); err != nil {
				return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			hostPaths[v.Name] = vdir
			continue
		case v.Projected != nil && k.cfg.APIServer != "":
			files, err := k.projectedFiles(ctx, pod, v.Projected, podIP)
			if err != nil {
				return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			if err := writeVolume(vdir, files); err != nil {
				return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			hostPaths[v.Name], projected[v.Name] = vdir, true
			continue
		default:
			// Projected volumes outside in-cluster mode and anything
			// else: not materialised; mounts of it are left as written.
			continue
		}
		data, err := k.objectData(ctx, pod.Namespace, kind, name)
		if err != nil {
			return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if data == nil && !optional {
			return nil, nil, fmt.Errorf("volume %s: %s %s/%s not found", v.Name, kind, pod.Namespace, name)
		}
		files, err := volumeFiles(data, items, mode, optional)
		if err != nil {
			return nil, nil, fmt.Errorf("volume %s: %s %s: %w", v.Name, kind, name, err)
		}
		if err := writeVolume(vdir, files); err != nil {
			return nil, nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		hostPaths[v.Name] = vdir
	}
	out := map[string][]mountRewrite{}
	binds := map[string][]bindMount{}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			hp, ok := hostPaths[m.Name]
			if !ok {
				continue
			}
			if m.SubPath != "" {
				hp = filepath.Join(hp, m.SubPath)
			}
			// In-cluster, every volume under /run is mounted for real and
			// keeps its path: a Unix socket there (the checker's) would
			// not fit the 108 bytes of sun_path at its host path.
			if (projected[m.Name] || k.cfg.APIServer != "") && underRun(m.MountPath) {
				binds[c.Name] = append(binds[c.Name], bindMount{src: hp, dst: m.MountPath})
				continue
			}
			out[c.Name] = append(out[c.Name], mountRewrite{mountPath: m.MountPath, hostPath: hp})
		}
	}
	return out, binds, nil
}

// start runs the container's binary in network namespace ns via
// `ip netns exec`, which execs it (same PID).
func (c *container) start(ns string, now func() time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.binary == "" {
		// Nothing to run: a container that runs forever, or an init
		// container that succeeded at once.
		c.startedAt = now()
		c.exited, c.exitCode = c.init, 0
		if c.init {
			c.exitedAt = c.startedAt
		}
		return nil
	}
	f, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("container %s: %w", c.name, err)
	}
	lw := &logWriter{now: now, f: f}
	argv := append([]string{"netns", "exec", ns}, bindArgv(c.binds, c.binary, c.args)...)
	cmd := exec.Command("ip", argv...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = lw, lw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return fmt.Errorf("container %s: start %s: %w", c.name, c.binary, err)
	}
	c.cmd, c.logw, c.logFile = cmd, lw, f
	c.startedAt, c.exited, c.ready = now(), false, false
	done := make(chan struct{})
	c.done = done
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.exited, c.exitedAt = true, now()
		c.exitCode = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.exitCode = ee.ExitCode()
		} else if err != nil {
			c.exitCode = -1
		}
		c.ready = false
		lw.mu.Lock()
		lw.flushLocked()
		lw.mu.Unlock()
		_ = f.Close()
		close(done)
	}()
	return nil
}

// stop sends the image's stop signal (SIGTERM unless it names another) to
// the process group, then SIGKILL after grace.
func (c *container) stop(grace time.Duration) {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	pid := cmd.Process.Pid
	sig := c.stopSignal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	_ = syscall.Kill(-pid, sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}

// probe marks the container ready once its readiness check passes on ip
// (see readiness). It reports whether readiness changed. A ready container
// stays ready until it exits.
func (c *container) probe(ip netip.Addr) bool {
	c.mu.Lock()
	if c.exited || c.ready || c.startedAt.IsZero() {
		c.mu.Unlock()
		return false
	}
	rd := c.readiness
	c.mu.Unlock()
	if !rd.check(ip) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exited {
		return false
	}
	c.ready = true
	return true
}

// stopPod kills the containers, removes the network and releases the IP.
func (k *Kubelet) stopPod(ctx context.Context, rp *runningPod) {
	var wg sync.WaitGroup
	for _, c := range append(append([]*container(nil), rp.inits...), rp.containers...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stop(2 * time.Second)
		}()
	}
	wg.Wait()
	if err := rp.net.teardown(ctx); err != nil {
		k.cfg.Log.Warn("pod network teardown failed", "pod", rp.ns+"/"+rp.name, "err", err)
	}
	k.pool.release(rp.net.ip)
	k.releaseVolumes(rp)
}

// releaseVolumes unmounts the pod's memory emptyDirs; their directories
// stay, as the others do.
func (k *Kubelet) releaseVolumes(rp *runningPod) {
	for _, dir := range rp.tmpfs {
		if err := unmountMemoryVolume(dir); err != nil {
			k.cfg.Log.Warn("pod volume unmount failed", "pod", rp.ns+"/"+rp.name, "err", err)
		}
	}
	rp.tmpfs = nil
}

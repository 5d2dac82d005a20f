package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/internal/cluster"
	"github.com/haptic-io/haptic/internal/controller"
)

func controllerCommand() *cli.Command {
	return &cli.Command{
		Name:  "controller",
		Usage: "run the controller in a Kubernetes cluster",
		Description: "Watches one HAProxyTemplateConfig (haproxy-haptic.org/v1alpha1) and the resources it names, renders\n" +
			"them, and deploys each plan to the agents of the HAProxy pods its podSelector finds. With\n" +
			"--leader-elect (the default) only the holder of the Lease dispatches and writes status; the\n" +
			"other replicas render warm. Uses the in-cluster config, or --kubeconfig.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig file (default: in-cluster config, else $KUBECONFIG)", EnvVars: []string{"KUBECONFIG"}},
			&cli.StringFlag{Name: "namespace", Usage: "namespace of the HAProxyTemplateConfig (default: the pod's, from POD_NAMESPACE)", EnvVars: []string{"HAPTIC_NAMESPACE", "POD_NAMESPACE"}},
			&cli.StringFlag{Name: "config-name", Value: "haptic", Usage: "name of the HAProxyTemplateConfig", EnvVars: []string{"HAPTIC_CONFIG_NAME"}},
			&cli.StringFlag{Name: "identity", Usage: "this replica's name in the Lease (default: the pod name from POD_NAME, else the host name)", EnvVars: []string{"HAPTIC_IDENTITY", "POD_NAME"}},
			&cli.StringFlag{Name: "haproxy", Value: "haproxy", Usage: "haproxy binary for the config-load and render gates (haproxy -c)", EnvVars: []string{"HAPTIC_HAPROXY_BINARY"}},
			&cli.StringFlag{Name: "checker-socket", Usage: "Unix socket of a `haptic checker` that runs the gates' and the webhook's haproxy -c (in a container without this one's credentials); empty: run them here", EnvVars: []string{"HAPTIC_CHECKER_SOCKET"}},
			&cli.StringFlag{Name: "scratch-dir", Usage: "directory of the gates' check trees (default: the system's temporary directory)", EnvVars: []string{"HAPTIC_SCRATCH_DIR"}},
			&cli.StringFlag{Name: "agent-token-file", Usage: "file holding the agents' bearer token (default: the config's agent.tokenSecretRef)", EnvVars: []string{"HAPTIC_AGENT_TOKEN_FILE"}},
			&cli.BoolFlag{Name: "leader-elect", Value: true, Usage: "elect a leader through a Lease (false: this replica leads alone)", EnvVars: []string{"HAPTIC_LEADER_ELECT"}},
			&cli.StringFlag{Name: "lease-name", Usage: "name of the Lease (default: haptic-<config-name>)", EnvVars: []string{"HAPTIC_LEASE_NAME"}},
			&cli.DurationFlag{Name: "lease-duration", Value: cluster.DefaultLeaseDuration, Usage: "how long a leader's term lasts without renewal", EnvVars: []string{"HAPTIC_LEASE_DURATION"}},
			&cli.DurationFlag{Name: "renew-deadline", Value: cluster.DefaultRenewDeadline, Usage: "how long the leader retries a renewal before it steps down", EnvVars: []string{"HAPTIC_RENEW_DEADLINE"}},
			&cli.DurationFlag{Name: "retry-period", Value: cluster.DefaultRetryPeriod, Usage: "how often a candidate tries the Lease", EnvVars: []string{"HAPTIC_RETRY_PERIOD"}},
			&cli.StringFlag{Name: "pprof-listen", Usage: "serve /debug/pprof on this loopback address (empty: none)", EnvVars: []string{"HAPTIC_PPROF_LISTEN"}},
			&cli.StringFlag{Name: "listen", Value: ":9180", Usage: "address of /healthz, /readyz and /metrics", EnvVars: []string{"HAPTIC_LISTEN"}},
			&cli.DurationFlag{Name: "debounce", Value: 0, Usage: "extra batching holdoff between reconciliations (0: none)", EnvVars: []string{"HAPTIC_DEBOUNCE"}},
			&cli.DurationFlag{Name: "check-spacing", Value: controller.DefaultCheckSpacing, Usage: "least time between two background haproxy -c checks", EnvVars: []string{"HAPTIC_CHECK_SPACING"}},
			&cli.StringFlag{Name: "webhook-listen", Usage: "serve the validating admission webhook (HTTPS, path " + cluster.WebhookPath + ") on this address, e.g. :9443 (empty: none)", EnvVars: []string{"HAPTIC_WEBHOOK_LISTEN"}},
			&cli.StringFlag{Name: "webhook-cert-dir", Usage: "directory of the webhook's tls.crt and tls.key (cert-manager), reloaded when they change (default: the controller makes its own, see --webhook-secret)", EnvVars: []string{"HAPTIC_WEBHOOK_CERT_DIR"}},
			&cli.StringFlag{Name: "webhook-secret", Value: "haptic-webhook-tls", Usage: "Secret (in --namespace) holding the CA and serving certificate the controller makes, shared by the replicas", EnvVars: []string{"HAPTIC_WEBHOOK_SECRET"}},
			&cli.StringFlag{Name: "webhook-service", Usage: "Service in front of the webhook: its DNS names go into the serving certificate", EnvVars: []string{"HAPTIC_WEBHOOK_SERVICE"}},
			&cli.StringSliceFlag{Name: "webhook-cert-hosts", Usage: "further DNS names or IP addresses of the serving certificate (a url clientConfig's host)", EnvVars: []string{"HAPTIC_WEBHOOK_CERT_HOSTS"}},
			&cli.StringFlag{Name: "webhook-configuration", Usage: "ValidatingWebhookConfiguration whose caBundle the controller sets to its CA (empty: none; not with --webhook-cert-dir)", EnvVars: []string{"HAPTIC_WEBHOOK_CONFIGURATION"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"HAPTIC_LOG_LEVEL"}},
			heapHeadroomFlag(),
			&cli.StringFlag{Name: "gateway-controller-name", Value: gatewayapi.ControllerName, Usage: "gateway mode: the GatewayClass controllerName served", EnvVars: []string{"HAPTIC_GATEWAY_CONTROLLER_NAME"}},
			&cli.StringFlag{Name: "gateway-haproxy-image", Value: cluster.DefaultFleetHAProxyImage, Usage: "gateway mode: image of the haproxy container of each Gateway's fleet", EnvVars: []string{"HAPTIC_GATEWAY_HAPROXY_IMAGE"}},
			&cli.StringFlag{Name: "gateway-agent-image", Value: cluster.DefaultFleetAgentImage, Usage: "gateway mode: haptic image of each fleet's bootstrap and agent containers (they run its /usr/local/bin/haptic-agent)", EnvVars: []string{"HAPTIC_GATEWAY_AGENT_IMAGE"}},
			&cli.IntFlag{Name: "gateway-replicas", Value: cluster.DefaultFleetReplicas, Usage: "gateway mode: HAProxy pods per Gateway", EnvVars: []string{"HAPTIC_GATEWAY_REPLICAS"}},
			&cli.StringFlag{Name: "gateway-service-type", Value: "LoadBalancer", Usage: "gateway mode: type of each fleet's Service (LoadBalancer, NodePort or ClusterIP)", EnvVars: []string{"HAPTIC_GATEWAY_SERVICE_TYPE"}},
			&cli.StringFlag{Name: "gateway-haproxy-requests", Value: "cpu=100m,memory=128Mi", Usage: "gateway mode: resource requests of the haproxy container (name=quantity,...)", EnvVars: []string{"HAPTIC_GATEWAY_HAPROXY_REQUESTS"}},
			&cli.StringFlag{Name: "gateway-haproxy-limits", Usage: "gateway mode: resource limits of the haproxy container (name=quantity,...)", EnvVars: []string{"HAPTIC_GATEWAY_HAPROXY_LIMITS"}},
			&cli.StringFlag{Name: "gateway-agent-requests", Value: "cpu=50m,memory=64Mi", Usage: "gateway mode: resource requests of the agent and bootstrap containers", EnvVars: []string{"HAPTIC_GATEWAY_AGENT_REQUESTS"}},
			&cli.StringFlag{Name: "gateway-agent-limits", Usage: "gateway mode: resource limits of the agent and bootstrap containers", EnvVars: []string{"HAPTIC_GATEWAY_AGENT_LIMITS"}},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg, err := controllerConfig(c)
			if err != nil {
				return cli.Exit(err.Error(), 2)
			}
			stopGovernor, err := startHeapGovernor(c)
			if err != nil {
				return cli.Exit(err.Error(), 2)
			}
			defer stopGovernor()
			return cluster.Run(ctx, cfg)
		},
	}
}

func controllerConfig(c *cli.Context) (cluster.Config, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cluster.Config{}, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
	rc, err := restConfig(c.String("kubeconfig"))
	if err != nil {
		return cluster.Config{}, err
	}
	ns := c.String("namespace")
	if ns == "" {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if ns == "" {
		return cluster.Config{}, fmt.Errorf("--namespace: required outside a pod")
	}
	id := c.String("identity")
	if id == "" {
		if id, err = os.Hostname(); err != nil {
			return cluster.Config{}, fmt.Errorf("--identity: %w", err)
		}
	}
	var token agentapi.Token
	if f := c.String("agent-token-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return cluster.Config{}, fmt.Errorf("--agent-token-file: %w", err)
		}
		token = agentapi.Token(strings.TrimSpace(string(b)))
	}
	fleet, err := fleetConfig(c)
	if err != nil {
		return cluster.Config{}, err
	}
	wh := cluster.WebhookConfig{Listen: c.String("webhook-listen"), CertDir: c.String("webhook-cert-dir"), Secret: c.String("webhook-secret"),
		Hosts: c.StringSlice("webhook-cert-hosts"), Configuration: c.String("webhook-configuration")}
	if svc := c.String("webhook-service"); svc != "" {
		wh.Hosts = append(cluster.ServiceHosts(svc, ns), wh.Hosts...)
	}
	if wh.CertDir != "" && wh.Configuration != "" {
		return cluster.Config{}, fmt.Errorf("--webhook-configuration: not with --webhook-cert-dir (the certificate's issuer injects the caBundle)")
	}
	rc.UserAgent = "haptic-controller"
	rc.QPS, rc.Burst = 50, 100
	return cluster.Config{
		REST: rc, Namespace: ns, Name: c.String("config-name"), Identity: id,
		HAProxy: c.String("haproxy"), ScratchDir: c.String("scratch-dir"), CheckerSocket: c.String("checker-socket"), AgentToken: token,
		LeaderElection: c.Bool("leader-elect"), LeaseName: c.String("lease-name"),
		LeaseDuration: c.Duration("lease-duration"), RenewDeadline: c.Duration("renew-deadline"), RetryPeriod: c.Duration("retry-period"),
		Listen:       c.String("listen"),
		PprofListen:  c.String("pprof-listen"),
		Debounce:     controller.DebounceConfig{Interval: c.Duration("debounce")},
		CheckSpacing: c.Duration("check-spacing"),
		Webhook:      wh,
		Log:          log,
		Fleet:        fleet,

		GatewayControllerName: c.String("gateway-controller-name"),
	}, nil
}

// fleetConfig maps the --gateway-* flags onto the fleet's shape.
func fleetConfig(c *cli.Context) (cluster.FleetConfig, error) {
	f := cluster.FleetConfig{
		HAProxyImage: c.String("gateway-haproxy-image"),
		AgentImage:   c.String("gateway-agent-image"),
		ServiceType:  corev1.ServiceType(c.String("gateway-service-type")),
	}
	switch f.ServiceType {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		return f, fmt.Errorf("--gateway-service-type %q: want LoadBalancer, NodePort or ClusterIP", f.ServiceType)
	}
	r := c.Int("gateway-replicas")
	if r < 1 || r > 100 {
		return f, fmt.Errorf("--gateway-replicas %d: want 1 to 100", r)
	}
	f.Replicas = int32(r)
	for _, x := range []struct {
		flag string
		into *corev1.ResourceList
	}{
		{"gateway-haproxy-requests", &f.HAProxyResources.Requests},
		{"gateway-haproxy-limits", &f.HAProxyResources.Limits},
		{"gateway-agent-requests", &f.AgentResources.Requests},
		{"gateway-agent-limits", &f.AgentResources.Limits},
	} {
		l, err := parseResources(c.String(x.flag))
		if err != nil {
			return f, fmt.Errorf("--%s: %w", x.flag, err)
		}
		*x.into = l
	}
	return f, nil
}

// parseResources parses "cpu=100m,memory=128Mi"; empty is nil.
func parseResources(s string) (corev1.ResourceList, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want name=quantity", kv)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

// restConfig is the in-cluster config, or the kubeconfig's.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if rc, err := rest.InClusterConfig(); err == nil {
			return rc, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes config: %w", err)
	}
	return rc, nil
}

package minicluster

import (
	"encoding/base64"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Kubeconfig renders a kubeconfig file for server, trusting caPEM and
// authenticating with either a client certificate or a bearer token.
func Kubeconfig(server string, caPEM []byte, client KeyPair, token string) ([]byte, error) {
	user := map[string]any{}
	if token != "" {
		user["token"] = token
	} else {
		user["client-certificate-data"] = base64.StdEncoding.EncodeToString(client.CertPEM)
		user["client-key-data"] = base64.StdEncoding.EncodeToString(client.KeyPEM)
	}
	cfg := map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "minicluster", "cluster": map[string]any{
			"server":                     server,
			"certificate-authority-data": base64.StdEncoding.EncodeToString(caPEM),
		}}},
		"users":           []any{map[string]any{"name": "minicluster", "user": user}},
		"contexts":        []any{map[string]any{"name": "minicluster", "context": map[string]any{"cluster": "minicluster", "user": "minicluster"}}},
		"current-context": "minicluster",
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return b, nil
}

func writeKubeconfig(path, server string, caPEM []byte, client KeyPair, token string) error {
	b, err := Kubeconfig(server, caPEM, client, token)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

# The haptic image: the static binaries haptic (`haptic controller` and the
# tools) and haptic-agent (the agent and its bootstrap, which the HAProxy
# pods run: the agent alone, lighter in every pod), on HAProxy 3.4's image,
# because the controller checks every rendered configuration with
# `haproxy -c` (the gate) before it deploys it. The HAProxy pods run the HAProxy image beside
# this one as the agent.
#
#   docker build -t ghcr.io/haptic-io/haptic:0.1.0 .
#
# The image runs as uid/gid 65532, as the chart's pods do (securityContext
# in charts/haptic/values.yaml); it needs no passwd entry and no $HOME, and
# writes only to the volumes the chart mounts (/tmp for the controller's
# check trees, /var/lib/haptic for the agent's tree).

# Build: the product module alone (tools/ holds nested modules it does not
# need), statically linked.
FROM docker.io/library/golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/ ./cmd/haptic ./cmd/haptic-agent

# Runtime: HAProxy 3.4 (for the gate) plus the binaries.
FROM docker.io/haproxytech/haproxy-debian:3.4
COPY --from=build /out/haptic /out/haptic-agent /usr/local/bin/
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/haptic"]
CMD ["--help"]

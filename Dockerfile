# syntax=docker/dockerfile:1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version stamped into the binary: the VERSION build arg (make docker and
# deploy/compose.yaml pass git describe), else git describe on the .git in the build
# context, else "dev" with a warning in the build log.
ARG VERSION=
RUN v="${VERSION}"; \
	if [ -z "$v" ]; then v=$(git describe --tags --always --dirty 2>/dev/null || true); fi; \
	if [ -z "$v" ]; then v=dev; echo "warning: no VERSION build arg and no git history in the build context: the image says version dev" >&2; fi; \
	echo "anima version $v"; \
	mkdir -p /out/data && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X github.com/anima-bot/anima/bot.Version=$v" -o /out/anima ./cmd/anima

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/anima /anima
# The configuration every command reads when given no file (deploy/compose.yaml points
# ANIMA_CONFIG at the file `anima init` wrote, passed as a secret).
COPY config.yaml /etc/anima/config.yaml
# The store (and its control socket) live here; mount a volume to keep them.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME /data
ENV ANIMA_CONFIG=/etc/anima/config.yaml ANIMA_STORAGE_PATH=/data/anima.db ANIMA_METRICS_LISTEN=0.0.0.0:9464
USER nonroot:nonroot
EXPOSE 9464
# Healthy while /readyz answers 200 (store open, Telegram reachable). distroless has no
# curl: the binary asks itself, at metrics.listen from the same config ($ANIMA_CONFIG)
# and environment.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
	CMD ["/anima", "health"]
ENTRYPOINT ["/anima"]
CMD ["run"]

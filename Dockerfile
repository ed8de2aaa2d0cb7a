# syntax=docker/dockerfile:1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN mkdir -p /out/data && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/anima-bot/anima/bot.Version=${VERSION}" -o /out/anima ./cmd/anima

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/anima /anima
COPY config.yaml /etc/anima/config.yaml
# The store (and its control socket) live here; mount a volume to keep them.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME /data
ENV ANIMA_STORAGE_PATH=/data/anima.db ANIMA_METRICS_LISTEN=0.0.0.0:9464
USER nonroot:nonroot
EXPOSE 9464
# Healthy while /readyz answers 200 (store open, Telegram reachable). distroless has no
# curl: the binary asks itself, at metrics.listen from the same config and environment.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
	CMD ["/anima", "health", "--config", "/etc/anima/config.yaml"]
ENTRYPOINT ["/anima"]
CMD ["run", "--config", "/etc/anima/config.yaml"]

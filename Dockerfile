# kbroker image: a static Go build on a slim Debian runtime. Used by
# docker-compose.yml; runs `kbroker <properties> [--override k=v ...]`.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/kbroker ./cmd/kbroker

FROM debian:stable-slim
RUN useradd --system --create-home --home-dir /kbroker --uid 1000 kbroker
WORKDIR /kbroker
COPY --from=build /out/kbroker /usr/local/bin/kbroker
COPY config/server.properties config/server.properties
COPY config/cluster/ config/cluster/
USER kbroker
# Log dirs are relative to the working directory (./data/...); compose
# mounts a volume there.
RUN mkdir -p data
EXPOSE 9092 9308
# SIGTERM is Kafka's controlled shutdown; give it time (compose sets
# stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["kbroker"]
CMD ["config/server.properties", "--override", "listeners=PLAINTEXT://0.0.0.0:9092", "--override", "advertised.listeners=PLAINTEXT://localhost:9092", "--override", "metrics.listener=0.0.0.0:9308"]

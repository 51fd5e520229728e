# Build in a Go image, run as a non-root user from a minimal image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sirtommy ./cmd/sirtommy

FROM debian:bookworm-slim
# /data is the SQLite data folder (docs/storage.md), owned by the server's
# user; a volume, so that players, ratings and races outlive the container.
RUN useradd --system --uid 10001 --no-create-home sirtommy \
 && mkdir /data && chown sirtommy:sirtommy /data && chmod 0750 /data
COPY --from=build /out/sirtommy /sirtommy
USER sirtommy
VOLUME /data
EXPOSE 8080
ENV SIRTOMMY_ADDR=:8080 SIRTOMMY_DATA=/data
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/sirtommy", "healthcheck"]
ENTRYPOINT ["/sirtommy"]
CMD ["serve"]

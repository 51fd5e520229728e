# Build in a Go image, run as a non-root user from a minimal image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sirtommy ./cmd/sirtommy

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home sirtommy
COPY --from=build /out/sirtommy /sirtommy
USER sirtommy
EXPOSE 8080
ENV SIRTOMMY_ADDR=:8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/sirtommy", "healthcheck"]
ENTRYPOINT ["/sirtommy"]
CMD ["serve"]

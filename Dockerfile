# The skills-mcp image: one static binary on an empty base, run as a user
# without privileges, on a read-only root. Nothing is pulled: build the
# binary first, next to this file's build context (scripts/release.sh
# builds stamped ones), and bring the CA certificates for https libraries:
#
#   mkdir -p build/image && CGO_ENABLED=0 go build -trimpath -o build/image/skills-mcp ./cmd/skills-mcp
#   cp /etc/ssl/certs/ca-certificates.crt build/image/
#   docker build -f Dockerfile -t skills-mcp build/image
#   docker run --read-only --tmpfs /tmp -p 3939:3939 -v "$PWD/library:/library:ro" skills-mcp
#
# The library is mounted at /library; the cache (extracted zips, digests,
# search indexes) lives in /tmp, a tmpfs, or in a volume at /cache with
# SKILLS_CACHE_DIR=/cache. Probes: GET /livez (200 while the process
# answers), GET /readyz (200 once the catalog is loaded), for any Host. Over HTTP the server refuses a public bind without allowed hosts
# or tokens: set SKILLS_ALLOWED_HOSTS or SKILLS_TOKEN_FILE for your setup.
FROM scratch
COPY skills-mcp /skills-mcp
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENV HOME=/tmp SKILLS_CACHE_DIR=/tmp/skills-mcp SKILLS_LOG_FORMAT=json \
    SKILLS_MCP_ROOT=/library SKILLS_HTTP=0.0.0.0:3939
EXPOSE 3939
ENTRYPOINT ["/skills-mcp"]

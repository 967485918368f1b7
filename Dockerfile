# The API listens on every address of the container in plain HTTP (PALISADE_API_PLAIN_HTTP): put a
# TLS terminator in front of it, or give it a certificate with -e PALISADE_API_TLS_CERT=… -e
# PALISADE_API_TLS_KEY=… (files mounted into the container); the HEALTHCHECK speaks either.
# Palisade: the API, a name server and an edge (the serve role: three processes under one
# supervisor) on the embedded store, data in /data.
#   docker build -t palisade . && docker run -p 8080:8080 -p 53:5300/udp -p 53:5300/tcp -p 80:8081 -p 443:8443 -v palisade:/data palisade
# The name server listens on 5300 inside the container (an unprivileged user cannot bind 53):
# publish it as 53 with the port mapping above. To listen on 53 itself instead (host networking),
# let unprivileged users bind it: `--sysctl net.ipv4.ip_unprivileged_port_start=53 -e PALISADE_DNS_PORT=53`.

# Build: the development dependencies (TypeScript) compile src/ to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/build.mjs
# The build checks the Node version first (bin/node-version.js).
COPY bin/node-version.js ./bin/node-version.js
COPY src ./src
# `prepare` builds dist/ (scripts/build.mjs) once the dependencies are in.
RUN npm ci --no-audit --no-fund

# Runtime: the production dependencies and the compiled output only; no compiler, no sources.
FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
ENV PALISADE_DATA_DIR=/data \
    PALISADE_API_HOST=0.0.0.0 \
    PALISADE_API_PORT=8080 \
    PALISADE_DNS_HOST=0.0.0.0 \
    PALISADE_DNS_PORT=5300 \
    PALISADE_EDGE_HOST=0.0.0.0 \
    PALISADE_API_PLAIN_HTTP=true
VOLUME ["/data"]
EXPOSE 8080 5300/udp 5300/tcp 8081 8443
USER node
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const tls = !!process.env.PALISADE_API_TLS_CERT; require(tls ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.PALISADE_API_PORT || 8080, path: '/healthz', rejectUnauthorized: false, timeout: 4000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
ENTRYPOINT ["node", "bin/palisade.js"]
CMD ["serve"]

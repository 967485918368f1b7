# Palisade: API, DNS and an edge in one process (the serve role) on the embedded store, data in /data.
#   docker build -t palisade . && docker run -p 8080:8080 -p 5300:5300/udp -p 5300:5300/tcp -p 8081:8081 -p 8443:8443 -v palisade:/data palisade
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
RUN mkdir -p /data && chown node:node /data
ENV PALISADE_DATA_DIR=/data \
    PALISADE_API_HOST=0.0.0.0 \
    PALISADE_API_PORT=8080 \
    PALISADE_DNS_HOST=0.0.0.0 \
    PALISADE_DNS_PORT=5300 \
    PALISADE_EDGE_HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 8080 5300/udp 5300/tcp 8081 8443
USER node
ENTRYPOINT ["node", "bin/palisade.js"]
CMD ["serve"]

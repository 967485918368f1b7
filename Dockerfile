# Palisade: API (and DNS) in one process on the embedded store, data in /data.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
ENV PALISADE_DATA_DIR=/data \
    PALISADE_API_HOST=0.0.0.0 \
    PALISADE_API_PORT=8080
VOLUME ["/data"]
EXPOSE 8080
USER node
ENTRYPOINT ["node", "bin/palisade.js"]
CMD ["serve"]

# The yiem worker (and CLI) as a container: `docker build -t yiem .`
# Stage 1 installs the production dependencies (with a C++ toolchain, for isolated-vm's native addon);
# stage 2 copies them next to the sources, without the toolchain, and runs as the unprivileged `node`
# user. The sources are TypeScript run through tsx, so there is no build step.

FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY activities ./activities
COPY workflows ./workflows
COPY tools ./tools
# The payload store (large payloads and messages); compose mounts a volume shared by every replica here.
ENV YIEM_PAYLOADS_DIR=/data/payloads
RUN mkdir -p /data/payloads && chown node:node /data/payloads
USER node
ENTRYPOINT ["node", "bin/yiem.mjs"]
CMD ["worker"]

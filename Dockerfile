# The yiem worker (and CLI) as a container: `docker build -t yiem .`
# Stage 1 installs every dependency from the lockfile (the Temporal SDK, isolated-vm and typescript are
# the package's peer dependencies, which the repository pins as devDependencies; isolated-vm 6 ships
# its addon prebuilt for Node 22 and 24, so no compiler is needed) and builds dist/ (`npm ci` runs
# `prepare`); stage 2 copies the build and node_modules and runs as the unprivileged `node` user.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY activities ./activities
COPY workflows ./workflows
COPY tools ./tools
RUN npm ci --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The payload store (large payloads and messages); compose mounts a volume shared by every replica here.
ENV YIEM_PAYLOADS_DIR=/data/payloads
RUN mkdir -p /data/payloads && chown node:node /data/payloads
USER node
ENTRYPOINT ["node", "bin/yiem.mjs"]
CMD ["worker"]

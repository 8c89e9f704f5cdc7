# The yiem worker (and CLI) as a container: `docker build -t yiem .`
# Stage 1 installs the production dependencies; stage 2 copies them next to the sources and runs as
# the unprivileged `node` user. The sources are TypeScript run through tsx, so there is no build step.

FROM node:20-bookworm-slim AS deps
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
USER node
ENTRYPOINT ["node", "bin/yiem.mjs"]
CMD ["worker"]

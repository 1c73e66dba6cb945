# reclib: one Node process on one SQLite file.
# Build stage: compile better-sqlite3 if no prebuilt binary fits, bundle dist/reclib.mjs, then
# drop the development dependencies. Runtime stage: production node_modules, the bundle and
# schema.sql only, as an unprivileged user.

FROM node:24-bookworm-slim AS build
# Toolchain for better-sqlite3's native addon (used only when its prebuilt binary is unavailable).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's own "prepare" (the build) needs the sources copied below;
# the native addon's install step is then run explicitly.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json build.mjs schema.sql ./
COPY bin ./bin
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
# The port stays at its default (8080), so a platform's PORT variable still applies.
ENV NODE_ENV=production \
    RECLIB_HOST=0.0.0.0 \
    RECLIB_DB=/data/reclib.db
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema.sql ./
# The database and its master secret live in /data, owned by the unprivileged "node" user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RECLIB_PORT || process.env.PORT || 8080) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM from `docker stop` reaches node directly (exec form): it finishes in-flight work and exits 0.
CMD ["node", "dist/reclib.mjs", "serve"]

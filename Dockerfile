# reclib: one Node process on one SQLite file.
# Build stage: build dist/ (the reclib command dist/reclib.cjs and its program, which holds every
# JavaScript dependency but one) and gather what the bundle loads from node_modules. On this image's Node (24) that is better-sqlite3's
# Node-API build (13.x, installed as better-sqlite3-napi): its JavaScript and the prebuilt addon for
# the image's platform (glibc: bookworm; on a musl base the file would be linuxmusl-<arch>.node).
# better-sqlite3 12.x, whose JavaScript is bundled, aborts on Node 24.19 and later when one of its
# objects is collected at the wrong moment (src/db/sqlite.ts); it is built and copied too (its
# addon, package.json and the two tiny packages that would find the addon if it were not in
# build/Release), as reclib falls back to it, with a warning, if 13.x cannot load.
# Runtime stage: that, the bundle and schema.sql (read at start), as an unprivileged user; no npm
# install, no compiler, no tsx.

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
 && mkdir -p /runtime/node_modules/better-sqlite3/build/Release \
 && cp -a node_modules/better-sqlite3/package.json /runtime/node_modules/better-sqlite3/ \
 && cp node_modules/better-sqlite3/build/Release/better_sqlite3.node /runtime/node_modules/better-sqlite3/build/Release/ \
 && cp -a node_modules/bindings node_modules/file-uri-to-path /runtime/node_modules/ \
 && mkdir -p /runtime/node_modules/better-sqlite3-napi/prebuilds \
 && cp -a node_modules/better-sqlite3-napi/package.json node_modules/better-sqlite3-napi/lib /runtime/node_modules/better-sqlite3-napi/ \
 && cp "node_modules/better-sqlite3-napi/prebuilds/$(node -p 'process.platform + "-" + process.arch').node" /runtime/node_modules/better-sqlite3-napi/prebuilds/ \
 && cp -a dist schema.sql /runtime/

FROM node:24-bookworm-slim
# The port stays at its default (8080), so a platform's PORT variable still applies.
# RECLIB_CONTAINER tells the server it runs in a container: it warns at start when RECLIB_PUBLIC_URL
# is not set (the address it listens on is not the one clients reach it at).
ENV NODE_ENV=production \
    RECLIB_HOST=0.0.0.0 \
    RECLIB_DB=/data/reclib.db \
    RECLIB_CONTAINER=1
WORKDIR /app
COPY --from=build /runtime ./
# The database and its master secret live in /data, owned by the unprivileged "node" user.
# `reclib` on the PATH, so that `docker exec <container> reclib …` runs the CLI (the server's
# first-run hint prints its commands so).
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/dist/reclib.cjs /usr/local/bin/reclib
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RECLIB_PORT || process.env.PORT || 8080) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM from `docker stop` reaches node directly (exec form): it answers the requests it received
# (Connection: close), finishes or releases deliveries, checkpoints, and exits 0 within 10 s
# (docker stop's default grace).
# --max-semi-space-size=16: the main thread's young generation as Node 20 sizes it. Node 24 lets its
# semi-spaces grow further under steady searching: on a library of 1,000,000, 8 s each of three
# searches at 32 connections took the server to 286 MB RSS with Node 24's default against 184 MB
# with 16 MB, at the same throughput (bench/results-notes.md, 2026-11-27). On Node 24 the flag
# costs the start nothing; `npm start` (Node 20) goes without it (src/worker-thread.ts,
# mainThreadNodeFlags). Worker threads set their own.
CMD ["node", "--max-semi-space-size=16", "dist/reclib.cjs", "serve"]

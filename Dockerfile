# syntax=docker/dockerfile:1
# Multi-stage build: compile TypeScript in a build stage, ship only production dependencies and
# dist/ in a slim image that runs as a non-root user. The Node release is the one package.json's
# `node` dev dependency pins for every npm script (a test holds the two together), and the CMD
# below is exactly what test/image-start.slow.test.ts starts. better-sqlite3 ships prebuilt
# binaries: nothing is compiled, so the image needs no compiler.

FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install script runs: production dependencies have none, and the `node` dev dependency (which
# fetches Node for machines that have another one) is removed: here the image's Node builds.
RUN npm ci --no-audit --no-fund --ignore-scripts && rm -rf node_modules/node node_modules/.bin/node
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24.21.0-bookworm-slim
# Production requires DATABASE_URL and QUOTES_PROVIDER (start-up is refused without them):
# postgres://… for many instances, or a SQLite file on the volume below for a single one
# (DATABASE_URL=sqlite:/var/lib/bff/bff.sqlite; never in ./data/, the development folder).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# A writable place for a SQLite file; with DATABASE_URL=postgres://… nothing is written here.
RUN mkdir -p /var/lib/bff && chown node:node /var/lib/bff
VOLUME ["/var/lib/bff"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# V8's young generation capped at 8 MiB semi-spaces (Node 24 grows them to 64 MiB under load; 16
# gave 18 MiB more peak RSS at the same CPU per request), and its old generation let grow to twice
# what is live after a full collection rather than up to four times (docs/deploy.md, BENCHMARKS.md).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=100", "dist/server.js"]

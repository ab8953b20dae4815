# syntax=docker/dockerfile:1
# Multi-stage build: compile TypeScript (and better-sqlite3's native addon) in a build stage,
# ship only production dependencies and dist/ in a slim image that runs as a non-root user.
# Node 24 is the current LTS (Node 20 reached end of life in April 2026); the code also runs on 20.

FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# Production requires DATABASE_URL (start-up is refused without it): postgres://… for many
# instances, or the SQLite file on the volume below for a single one.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# A writable place for the SQLite default; with DATABASE_URL=postgres://… nothing is written here.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/server.js"]

# syntax=docker/dockerfile:1
# The production image (docs/deploy.md#a-container): built in one stage with every package, run in
# another with the runtime packages only, as the unprivileged `node` user. One image serves the API
# (the default command), the delivery worker (`node dist/worker.js`), the migrations
# (`node dist/db/migrate-cli.js`) and the admin commands (`node dist/admin.js …`); compose.yaml runs
# all of them. test/ops/container.test.ts checks what this file names without Docker.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# The manifests first, so the packages' layer is reused while they are unchanged. No install scripts
# yet: the client workspace's `prepare` needs the sources, and the build below needs none of them.
COPY package.json package-lock.json ./
COPY client/package.json client/
COPY web/package.json web/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# dist/ (the server, tsc) and web/dist/ (the pages, Vite).
RUN npm run build && npm run web:build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
COPY web/package.json web/
# Runtime packages only. No runtime package has an install script (the argon2 binding is prebuilt);
# --ignore-scripts also skips the client workspace's build, which the server does not use.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
COPY --from=build /app/drizzle drizzle
COPY --from=build /app/web/dist web/dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is the first process: SIGTERM reaches the server, which finishes in-flight requests.
CMD ["node", "dist/main.js"]

import { setTimeout as sleep } from 'node:timers/promises'
import type { Server } from 'node:http'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config/config.js'
import { StoreOpenError } from './store/store.js'
import { loadOrCreateDevSecrets } from './config/dev-secrets.js'
import { loggingOptions } from './observability/logging.js'
import { configurationSummary, configurationWarnings } from './config/startup.js'
import { httpTimeouts } from './config/timeouts.js'

/** Time for in-flight requests once the drain is over; past it the process exits 1. */
const IN_FLIGHT_DEADLINE_MS = 10_000
/**
 * How long closing leaves idle connections open. Node's `server.close()` closes them at once,
 * and a connection accepted an instant before, whose request is not read yet, counts as idle:
 * its client would see a reset. In the grace such requests are served (with `Connection:
 * close`), and a balancer's idle connections close from its side (its upstream idle timeout
 * should be shorter, docs/deploy.md). Neither Fastify nor close-with-grace has an option for it:
 * `server.close()` itself calls `closeIdleConnections()`, so that call is deferred.
 */
const IDLE_CLOSE_GRACE_MS = 2000

const SIGNALS: Array<'SIGTERM' | 'SIGINT'> = ['SIGTERM', 'SIGINT']
/**
 * Started by an npm script (`npm run start:prod`, `npm start`: they `exec` node, so npm's child is
 * this process), a signal often arrives twice: once sent to the whole process group (a terminal's
 * Ctrl-C, systemd's default KillMode, pm2's tree kill) and once more as npm passes on the one it
 * got. Elsewhere a second signal exits at once (close-with-grace); here the first starts the
 * shutdown and the others are ignored — its deadline still ends it (docs/deploy.md#shutdown).
 */
const STARTED_BY_NPM = process.env.npm_lifecycle_event !== undefined

function deferIdleClose (server: Server): void {
  const closeIdleConnections = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = () => { setTimeout(closeIdleConnections, IDLE_CLOSE_GRACE_MS).unref() }
}

/** Connections open when closing begins: what the close then waits for (their requests, streams). */
async function openConnections (server: Server): Promise<number> {
  return await new Promise(resolve => { server.getConnections((_error, count) => { resolve(count) }) })
}

async function start (): Promise<void> {
  const config = loadConfig(process.env, {
    devSecrets: () => loadOrCreateDevSecrets('data'),
    onDevSecrets: secrets => {
      const lines = ['WARNING: development secrets (from ./data/dev-secrets.json); never use them in production.']
      if (secrets.jwtSecret !== undefined) lines.push(`  JWT_SECRET=${secrets.jwtSecret}`)
      if (secrets.apiKey !== undefined) lines.push(`  API_KEYS=${secrets.apiKey}`)
      process.stderr.write(`${lines.join('\n')}\n`)
    }
  })

  const app = await buildApp(config, {
    ...loggingOptions(config.env.LOG_LEVEL),
    // Behind a load balancer: keep idle connections longer than common balancer idle timeouts
    // (60 s), and never let a slow client hold a request open past REQUEST_TIMEOUT_MS.
    ...httpTimeouts(config.env.REQUEST_TIMEOUT_MS),
    // Once closing, a request on an open connection is served (and its connection closed)
    // rather than refused: the store closes only after the last connection ends.
    return503OnClosing: false
  })
  app.log.info({ configuration: configurationSummary(config) }, 'configuration')
  for (const warning of configurationWarnings(config)) app.log.warn(warning)
  for (const { message, ...names } of config.misspellings) app.log.warn(names, message)
  deferIdleClose(app.server)

  // On SIGTERM or SIGINT (or an uncaught error): /ready answers 503 from now on; after the drain
  // delay the balancer has stopped sending, and closing finishes the requests in flight. Exits 0,
  // or 1 after an error or past the deadline.
  let received: string | undefined
  const shutdown = closeWithGrace({
    delay: config.shutdownDrainMs + IDLE_CLOSE_GRACE_MS + IN_FLIGHT_DEADLINE_MS,
    logger: app.log,
    onTimeout: () => { app.log.error('shutdown deadline passed; exiting') },
    skip: STARTED_BY_NPM ? SIGNALS : []
  }, async ({ signal = received, err }) => {
    if (err !== undefined) app.log.error({ err }, 'uncaught error; closing')
    app.lifecycle.draining = true
    app.log.info(
      { signal, drainMs: config.shutdownDrainMs },
      'shutting down: draining, then finishing in-flight requests'
    )
    const started = performance.now()
    await sleep(config.shutdownDrainMs)
    const closing = performance.now()
    const connections = await openConnections(app.server)
    await app.close()
    app.log.info({
      signal,
      drainMs: Math.round(closing - started),
      connections,
      closeMs: Math.round(performance.now() - closing)
    }, 'shutdown complete')
  })
  if (STARTED_BY_NPM) {
    for (const name of SIGNALS) {
      process.on(name, () => {
        if (received !== undefined) return
        received = name
        shutdown.close()
      })
    }
  }

  await app.listen({ port: config.env.PORT, host: config.env.HOST })
}

start().catch(error => {
  const message =
    error instanceof ConfigError || error instanceof StoreOpenError
      ? error.message
      : `Start-up failed: ${(error as Error).stack ?? String(error)}`
  process.stderr.write(`${message}\n`)
  process.exit(1)
})

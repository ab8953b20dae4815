import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config/config.js'
import { StoreOpenError } from './store/store.js'
import { loadOrCreateDevSecrets } from './config/dev-secrets.js'
import { loggingOptions } from './observability/logging.js'
import { configurationSummary, configurationWarnings } from './observability/startup.js'
import { httpTimeouts } from './http/timeouts.js'

/** Time for in-flight requests once the drain is over; past it the process exits 1. */
const IN_FLIGHT_DEADLINE_MS = 10_000
/**
 * How long closing leaves idle connections open. Node's `server.close()` closes them at once,
 * and a connection accepted an instant before, whose request is not read yet, counts as idle:
 * its client would see a reset. In the grace such requests are served (with `Connection:
 * close`), and a balancer's idle connections close from its side (its upstream idle timeout
 * should be shorter, docs/deploy.md).
 */
const IDLE_CLOSE_GRACE_MS = 2000

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
  const closeIdleConnections = app.server.closeIdleConnections.bind(app.server)
  app.server.closeIdleConnections = () => { setTimeout(closeIdleConnections, IDLE_CLOSE_GRACE_MS).unref() }

  let closing = false
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) return
    closing = true
    // /ready answers 503 from now on; after the drain delay the balancer has stopped sending.
    app.lifecycle.draining = true
    app.log.info(
      { signal, drainMs: config.shutdownDrainMs },
      'shutting down: draining, then finishing in-flight requests'
    )
    setTimeout(() => {
      app.log.error('shutdown deadline passed; exiting')
      process.exit(1)
    }, config.shutdownDrainMs + IDLE_CLOSE_GRACE_MS + IN_FLIGHT_DEADLINE_MS).unref()
    setTimeout(() => {
      app.close().then(() => process.exit(0), error => {
        app.log.error({ err: error }, 'error while closing')
        process.exit(1)
      })
    }, config.shutdownDrainMs)
  }
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)

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

import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Store, type StoreOptions } from '../store/store.js'
import { dependencyHealth, telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's data (SQLite or PostgreSQL). */
    store: Store
  }
}

export type StorePluginOptions =
  | ({ /** `DATABASE_URL`: `sqlite:<file>`, `sqlite::memory:` or `postgres://…`. */ url: string } & StoreOptions)
  /** A store the host opened and will close itself. */
  | { store: Store }

async function storePlugin (app: FastifyInstance, options: StorePluginOptions): Promise<void> {
  if ('store' in options) {
    app.decorate('store', options.store)
    return
  }
  const { url, ...storeOptions } = options
  const store = await Store.open(url, {
    telemetry: telemetryOf(app),
    health: dependencyHealth(app, 'store'),
    checkpointerHealth: dependencyHealth(app, 'sqlite_checkpointer'),
    log: app.log,
    ...storeOptions
  })
  app.decorate('store', store)
  app.addHook('onClose', async () => { await store.close() })
}

/** Opens the store from `DATABASE_URL`, migrates it, and closes it with the app. */
export default fp(storePlugin, { name: 'bff-store', fastify: '5.x' })

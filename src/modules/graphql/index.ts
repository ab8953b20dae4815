import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { http } from '../../http/node-http.js'
import { ensureDomain } from '../../plugins/domain.js'
import type { GraphqlEngine, GraphqlEngineOptions } from './engine.js'
import { graphiqlRoutes } from './graphiql.js'

/** The engine's options (./engine.js), and where the engine is loaded from. */
export interface GraphqlModuleOptions extends GraphqlEngineOptions {
  /** ./engine.js, unless a test gives one that fails to load. */
  loadEngine?: () => Promise<typeof import('./engine.js')>
}

/** An upgrade's socket, until the engine takes it, is destroyed on error (as @fastify/websocket guards it). */
function destroyOnError (this: Duplex): void {
  this.destroy()
}

/**
 * GraphQL (docs/api.md#graphql) over the REST domains: `POST /graphql`, `GET /graphql` for queries, and
 * the `aggregatorItem` subscription over WebSocket (`graphql-transport-ws`) on the same path.
 *
 * Mercurius, graphql-js, graphql-jit and the WebSocket server are loaded on the first GraphQL
 * request; the first GraphQL caller of a process waits for the load instead (about 200 ms once).
 * A load that fails answers 500 and the next request tries again. Fastify takes no route after
 * start, so the routes are registered here, where every hook of the app runs for them as for any
 * route; each hands its request to the engine (./engine.js), which answers it as Mercurius would
 * in this scope.
 *
 * Why not `app.register(mercurius)` at start, measured (2026-11-28, `npm run build`, `node
 * dist/server.js` with NODE_ENV=production, a migrated SQLite file, QUOTES_PROVIDER=offline; from
 * spawn to the first answered `GET /ready`, 23 alternated pairs in three batches on the shared
 * 2-core machine): loading the same engine before listening instead (an `onReady` hook awaiting
 * it; the plain form would spare only the engine's own Fastify instance, a few ms) costs
 * +128 to +158 ms of process CPU to the first answer, medians 431 → 566, 442 → 570, 460 → 618 ms
 * (+30 %), and +122 ms on the main thread (327 → 449); the first answer's wall time, +30, +53 and
 * +536 ms (668 → 698, 713 → 766 and, on a loaded machine, 1 954 → 2 490 ms). That is a third of
 * a bare Fastify start (about 380 ms) on a start held to twice bare's, for an interface most
 * processes never serve, so the lazy form stays.
 */
async function graphqlModule (app: FastifyInstance, options: GraphqlModuleOptions): Promise<void> {
  await ensureDomain(app)
  app.addHook('onRequest', async request => { await request.access.identifyEarly() })
  // GraphQL is described by its own schema (`schema.graphql`, introspection), not by OpenAPI.
  app.addHook('onRoute', route => { route.schema = { ...route.schema, hide: true } as typeof route.schema })

  const requests = new WeakMap<IncomingMessage, FastifyRequest>()
  const upgrades = new WeakMap<IncomingMessage, { socket: Duplex, head: Buffer }>()
  const load = options.loadEngine ?? (async () => await import('./engine.js'))
  let starting: Promise<GraphqlEngine> | undefined
  let started: GraphqlEngine | undefined
  // One load for concurrent first requests; a failed one is tried again by the next request.
  const engine = async (): Promise<GraphqlEngine> => {
    starting ??= load()
      .then(async module => await module.startGraphqlEngine(app, options, raw => requests.get(raw) as FastifyRequest))
      .then(loaded => (started = loaded))
      .catch((error: unknown) => {
        starting = undefined
        throw error
      })
    return await starting
  }

  const relay = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const graphql = await engine()
    requests.set(request.raw, request)
    const upgrade = upgrades.get(request.raw)
    if (upgrade === undefined) {
      graphql.serve(request, reply)
      return
    }
    reply.hijack()
    reply.raw.detachSocket(upgrade.socket as Socket)
    upgrade.socket.removeListener('error', destroyOnError)
    graphql.upgrade(request.raw, upgrade.socket, upgrade.head)
  }
  // Mercurius's routes validate the query string (its schemas, the app's rules): these take it as it is.
  const route = { attachValidation: true, handler: relay }
  app.get('/graphql', route)
  app.post('/graphql', route)
  if (options.devTools) graphiqlRoutes(app)
  // Mercurius's own parser for a document sent as the body, read here with the app's body limit.
  app.addContentTypeParser('application/graphql', { parseAs: 'string' }, (_request, body, done) => {
    done(null, { query: body })
  })

  // A WebSocket upgrade goes through the app's routing, and so its hooks, as @fastify/websocket
  // routes it; the `/graphql` route hands the socket to the engine.
  app.server.on('upgrade', (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', destroyOnError)
    upgrades.set(raw, { socket, head })
    const response = new http.ServerResponse(raw)
    try {
      response.assignSocket(socket as Socket)
      app.routing(raw, response)
    } catch (error) {
      app.log.warn({ err: error }, 'websocket upgrade failed')
    }
  })
  // An upgrade answered over HTTP (refused by a hook, the engine failing) leaves no socket open.
  app.addHook('onResponse', (request, _reply, done) => {
    upgrades.get(request.raw)?.socket.destroy()
    done()
  })
  app.addHook('preClose', async () => { started?.goingAway() })
  app.addHook('onClose', async () => {
    const loaded = await starting?.catch(() => undefined)
    await loaded?.close()
  })
}

export default fp(graphqlModule, {
  name: 'bff-graphql',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes', 'bff-upstreams', 'bff-change-feed'],
  decorators: { fastify: ['verifyApiKey', 'verifyJwt', 'store', 'quotes', 'aggregator', 'changeFeed'] },
  encapsulate: true
})

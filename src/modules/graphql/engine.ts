import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { Readable } from 'node:stream'
import Fastify, {
  LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest
} from 'fastify'
import mercurius from 'mercurius'
import websocket, { type WebsocketPluginOptions } from '@fastify/websocket'
import { GraphQLError, NoSchemaIntrospectionCustomRule, specifiedRules, validate } from 'graphql'
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth'
import { answerError } from '../../plugins/error-responses.js'
import schemaCompilers from '../../plugins/schema-compilers.js'
import strictInputs from '../../plugins/strict-inputs.js'
import type { Operation } from '../../operations/operation.js'
import type { GraphqlContext } from './context.js'
import { OperationGuard } from './guard.js'
import {
  formatGraphqlError, graphqlErrorFormatter, MAX_QUERY_DEPTH, QueryRefusedError
} from '../../plugins/graphql-errors.js'
import {
  assertValidationAffordable, DocumentGuard, documentLimits, guardedWebSocket
} from '../../plugins/graphql-limits.js'
import { buildGraphql } from './schema.js'
import { admittedAccess, SubscriptionSession, type SessionSocket } from './session.js'

/*
 * The GraphQL engine, loaded on the first GraphQL request (docs/style.md, "Start-up: what is
 * compiled when"): Mercurius with graphql-js, graphql-jit and the subscriptions' WebSocket
 * server, registered exactly as they would be in the app, in an instance of their own that never
 * listens. The app's `/graphql` routes ran every hook of the app (request id, security headers,
 * CORS, credentials, rate limit; access line and metrics when the answer ends) and hand the
 * request here with its body already parsed.
 */

type WebSocketClass = NonNullable<NonNullable<WebsocketPluginOptions['options']>['WebSocket']>

/** Automatic persisted queries each instance remembers (a forgotten hash costs the client one retry with the text). */
const PERSISTED_QUERIES = 5000

/**
 * Deeper documents are refused before they run (graphql-armor's rule, in validation), introspection
 * fields not counted: the standard introspection query (`getIntrospectionQuery()`) nests 13 levels.
 */
const depthRule = maxDepthRule({
  n: MAX_QUERY_DEPTH,
  ignoreIntrospection: true,
  propagateOnRejection: false,
  onReject: [(context, error) => {
    const found = /found (\d+)/.exec(error.message)?.[1] ?? '?'
    const message = `query depth (${found}) exceeds the query depth limit of ${MAX_QUERY_DEPTH}`
    context?.reportError(new QueryRefusedError(message, { maxDepth: MAX_QUERY_DEPTH }))
  }]
})

/** Errors of the GraphQL layer answer as GraphQL; the rest (429, 413, 503…) in the standard body, as on every route. */
function isGraphqlLayerError (error: FastifyError): boolean {
  return error instanceof GraphQLError || (typeof error.code === 'string' && error.code.startsWith('MER_ERR_'))
}

export interface GraphqlEngineOptions {
  /** Introspection, and the module's GraphiQL page at `/graphiql` (outside production only: docs/api.md#graphql). */
  devTools: boolean
  /** The most one operation may cost (GRAPHQL_MAX_COST); costlier ones are refused before they run. */
  maxCost: number
  /** The longest document, in UTF-8 bytes (GRAPHQL_MAX_DOCUMENT_BYTES); longer ones are refused unparsed. */
  maxDocumentBytes: number
  /** JWT_LEEWAY: a subscription connection closes when REST would refuse its token. */
  tokenLeewaySeconds: number
  /** The declared operations it serves: the service's (src/operations), unless a host adds its own. */
  operations?: readonly Operation[]
}

/** What the app hands the engine: the request as the app's routes saw it. */
export type AppRequestOf = (raw: IncomingMessage) => FastifyRequest

export interface GraphqlEngine {
  /** Answers an HTTP request the app's `/graphql` route accepted (its reply is taken over). */
  serve: (request: FastifyRequest, reply: FastifyReply) => void
  /** Takes a WebSocket upgrade the app's `/graphql` route accepted. */
  upgrade: (raw: IncomingMessage, socket: Duplex, head: Buffer) => void
  /** Shutting down: each subscription connection closes with 1001 (going away), the client reconnects elsewhere. */
  goingAway: () => void
  close: () => Promise<void>
}

/** Each subscription connection closes with 1001 (going away): the client reconnects elsewhere. */
function closeGoingAway (engine: FastifyInstance): void {
  for (const client of engine.websocketServer.clients) client.close(1001, 'Servidor em desligamento')
}

/** Builds the engine for `app` (its domain, its logger, its closing state). */
export async function startGraphqlEngine (
  app: FastifyInstance, options: GraphqlEngineOptions, appRequestOf: AppRequestOf
): Promise<GraphqlEngine> {
  const engine = Fastify({
    loggerInstance: app.log,
    // The app's access line covers the request; this instance logs none of its own.
    logController: new LogController({ disableRequestLogging: true }),
    // The request's id and logger are the app's (its trace id, its x-request-id).
    genReqId: raw => appRequestOf(raw).id,
    childLoggerFactory: (_logger, _bindings, _options, raw) => appRequestOf(raw as IncomingMessage).log,
    bodyLimit: app.initialConfig.bodyLimit
  })
  // The app's validators and serializers, and its query-parameter rule, for Mercurius's routes.
  await engine.register(schemaCompilers)
  await engine.register(strictInputs)
  // The body was parsed by the app (its JSON rules, its limit): the same object, not the spent stream.
  engine.removeContentTypeParser('application/json')
  engine.addContentTypeParser('application/json', (request, _payload, done) => {
    done(null, appRequestOf(request.raw).body)
  })
  // Mercurius reads `application/graphql` itself: it gets the text the app read.
  engine.addHook('preParsing', (request, _reply, payload, done) => {
    const body = appRequestOf(request.raw).body as { query?: unknown } | undefined
    if (!request.headers['content-type']?.startsWith('application/graphql') || typeof body?.query !== 'string') {
      done(null, payload)
      return
    }
    const text = Object.assign(Readable.from([Buffer.from(body.query)], { objectMode: false }), {
      receivedEncodedLength: Number(request.headers['content-length'] ?? Buffer.byteLength(body.query))
    })
    done(null, text)
  })
  if (app.hasDecorator('lifecycle')) {
    // Once the app is closing, every answer closes its connection (src/plugins/lifecycle.ts).
    engine.addHook('onSend', (_request, reply, payload, done) => {
      if (app.lifecycle.closing) reply.header('connection', 'close')
      done(null, payload)
    })
  }
  await registerMercurius(engine, app, options, appRequestOf)
  await engine.ready()
  return {
    serve: (request, reply) => {
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value)
      }
      reply.hijack()
      engine.routing(request.raw, reply.raw)
    },
    upgrade: (raw, socket, head) => { engine.server.emit('upgrade', raw, socket, head) },
    goingAway: () => { closeGoingAway(engine) },
    close: async () => { await engine.close() }
  }
}

async function registerMercurius (
  engine: FastifyInstance, app: FastifyInstance, options: GraphqlEngineOptions, appRequestOf: AppRequestOf
): Promise<void> {
  const { domain } = app
  const contextOf = (request: FastifyRequest): Pick<GraphqlContext, 'access' | 'domain' | 'log'> =>
    ({ access: appRequestOf(request.raw).access, domain, log: request.log })
  const { schema, loaders, rules } = buildGraphql(options.operations)
  const operationGuard = new OperationGuard(schema, options.maxCost, rules)
  const limits = documentLimits(options.maxDocumentBytes)
  const documentGuard = new DocumentGuard(limits)
  const hideSuggestions = !options.devTools
  // Handed to GraphQL's `validate` as they are (Mercurius's types name `maxErrors` only).
  const validateOptions: NonNullable<Parameters<typeof validate>[3]> = { hideSuggestions }
  const validationRules = options.devTools ? [depthRule] : [depthRule, NoSchemaIntrospectionCustomRule]
  // The subscriptions' WebSocket server, registered here rather than by Mercurius: its messages
  // are bounded by the document limit (with room for variables and the JSON around the text),
  // and an operation's document is checked before Mercurius parses it.
  await engine.register(websocket, {
    options: {
      maxPayload: 2 * limits.maxBytes + 64 * 1024,
      // A subclass of ws's WebSocket (whose types want its static members too).
      WebSocket: guardedWebSocket(source => { documentGuard.assert(source) }, app.log) as unknown as WebSocketClass
    },
    // The app's preClose calls it (goingAway); the engine itself closes after the app's server.
    preClose: async function (this: FastifyInstance) { closeGoingAway(this) }
  })
  await engine.register(mercurius, {
    schema,
    loaders: loaders as never,
    path: '/graphql',
    // The GraphiQL page is the module's own (./graphiql.ts): Mercurius's loads its scripts from a CDN.
    graphiql: false,
    // Compiled with graphql-jit from a query's second run on.
    jit: 1,
    graphql: { parseOptions: { maxTokens: limits.maxTokens }, validateOptions },
    validationRules,
    persistedQueryProvider: mercurius.persistedQueryDefaults.automatic(PERSISTED_QUERIES),
    context: request => contextOf(request),
    errorFormatter: (execution, context) =>
      graphqlErrorFormatter(execution, (context as unknown as Partial<GraphqlContext>).log ?? app.log, hideSuggestions),
    errorHandler: (error, request, reply) => {
      if (!isGraphqlLayerError(error as FastifyError)) {
        answerError(error as FastifyError, request, reply)
        return
      }
      const errors = [error as unknown as GraphQLError]
      const { statusCode, response } = graphqlErrorFormatter({ errors }, request.log, hideSuggestions)
      // A mutation over GET is 405, as GraphQL over HTTP says.
      reply.code(error.statusCode === 405 ? 405 : statusCode).send(response)
    },
    subscription: {
      // One session per connection: it ends when the connection's token expires.
      context: (socket, request) => {
        const session = new SubscriptionSession(socket as unknown as SessionSocket, options.tokenLeewaySeconds * 1000)
        const context = contextOf(request)
        return { ...context, access: admittedAccess(context.access, session), session }
      },
      // Browsers cannot set headers on a WebSocket: credentials come in `connection_init`'s
      // payload, which Mercurius adds to the upgrade request's headers, by their lower-case names.
      onConnect: ({ payload }: { payload?: unknown }) => {
        if (payload !== null && typeof payload === 'object') {
          for (const [name, value] of Object.entries(payload)) {
            const lower = name.toLowerCase()
            if (lower !== name) (payload as Record<string, unknown>)[lower] = value
          }
        }
        return true
      }
    }
  })
  // Cheapest first: the text before it is parsed, the document before it is validated, then
  // every argument and the cost before anything runs.
  engine.graphql.addHook('preParsing', async (_schema, source) => { documentGuard.assert(source) })
  engine.graphql.addHook('preValidation', async (_schema, document) => { assertValidationAffordable(document) })
  // Mercurius validates no subscription's document: the rules of HTTP's, before it starts (its `error` message).
  engine.graphql.addHook('preSubscriptionExecution', async (schema, document, context) => {
    assertValidationAffordable(document)
    const [error] = validate(schema, document, [...specifiedRules, ...validationRules], validateOptions)
    if (error === undefined) return
    const { message, extensions } = formatGraphqlError(error, (context as Partial<GraphqlContext>).log ?? app.log,
      hideSuggestions)
    throw new GraphQLError(message, { extensions })
  })
  engine.graphql.addHook('preExecution', async (_schema, document, context, variables) => {
    operationGuard.assertAllowed(document, variables, operationNameOf(context.reply?.request))
  })
}

/** The operation a request names (a document may hold several), from its body or query string. */
function operationNameOf (request: { body?: unknown, query?: unknown } | undefined): string | undefined {
  for (const source of [request?.body, request?.query]) {
    const name = (source as { operationName?: unknown } | null | undefined)?.operationName
    if (typeof name === 'string') return name
  }
  return undefined
}

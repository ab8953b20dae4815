import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import mercurius from 'mercurius'
import websocket, { type WebsocketPluginOptions } from '@fastify/websocket'
import { GraphQLError, NoSchemaIntrospectionCustomRule, specifiedRules, validate } from 'graphql'
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth'
import { answerError } from '../../plugins/error-responses.js'
import { ensureDomain } from '../../plugins/domain.js'
import type { GraphqlContext } from './context.js'
import { OperationGuard } from './guard.js'
import {
  formatGraphqlError, graphqlErrorFormatter, MAX_QUERY_DEPTH, QueryRefusedError
} from '../../plugins/graphql-errors.js'
import {
  assertValidationAffordable, DocumentGuard, documentLimits, guardedWebSocket
} from '../../plugins/graphql-limits.js'
import { graphqlLoaders } from './loaders.js'
import { buildGraphqlSchema } from './schema.js'
import { admittedAccess, SubscriptionSession, type SessionSocket } from './session.js'

export { buildGraphqlSchema } from './schema.js'

export interface GraphqlModuleOptions {
  /** Introspection and the GraphiQL page at `/graphiql` (outside production only: docs/api.md#graphql). */
  devTools: boolean
  /** The most one operation may cost (GRAPHQL_MAX_COST); costlier ones are refused before they run. */
  maxCost: number
  /** The longest document, in UTF-8 bytes (GRAPHQL_MAX_DOCUMENT_BYTES); longer ones are refused unparsed. */
  maxDocumentBytes: number
  /** JWT_LEEWAY: a subscription connection closes when REST would refuse its token. */
  tokenLeewaySeconds: number
}

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

/**
 * GraphQL (docs/api.md#graphql) over the REST domains: `POST /graphql`, `GET /graphql` for queries, and
 * the `aggregatorItem` subscription over WebSocket (`graphql-transport-ws`) on the same path.
 */
async function graphqlModule (app: FastifyInstance, options: GraphqlModuleOptions): Promise<void> {
  await ensureDomain(app)
  const { domain } = app
  const contextOf = (request: FastifyRequest): Pick<GraphqlContext, 'access' | 'domain' | 'log'> =>
    ({ access: request.access, domain, log: request.log })

  app.addHook('onRequest', async request => { await request.access.identifyEarly() })
  // GraphQL is described by its own schema (`schema.graphql`, introspection), not by OpenAPI.
  app.addHook('onRoute', route => { route.schema = { ...route.schema, hide: true } as typeof route.schema })

  const schema = buildGraphqlSchema()
  const operationGuard = new OperationGuard(schema, options.maxCost)
  const limits = documentLimits(options.maxDocumentBytes)
  const documentGuard = new DocumentGuard(limits)
  const hideSuggestions = !options.devTools
  // Handed to GraphQL's `validate` as they are (Mercurius's types name `maxErrors` only).
  const validateOptions: NonNullable<Parameters<typeof validate>[3]> = { hideSuggestions }
  const validationRules = options.devTools ? [depthRule] : [depthRule, NoSchemaIntrospectionCustomRule]
  // The subscriptions' WebSocket server, registered here rather than by Mercurius: its messages
  // are bounded by the document limit (with room for variables and the JSON around the text),
  // and an operation's document is checked before Mercurius parses it.
  await app.register(websocket, {
    options: {
      maxPayload: 2 * limits.maxBytes + 64 * 1024,
      // A subclass of ws's WebSocket (whose types want its static members too).
      WebSocket: guardedWebSocket(source => { documentGuard.assert(source) }, app.log) as unknown as WebSocketClass
    },
    // Shutting down: each connection closes with 1001 (going away), the client reconnects elsewhere.
    preClose: async function (this: FastifyInstance) {
      for (const client of this.websocketServer.clients) client.close(1001, 'Servidor em desligamento')
    }
  })
  await app.register(mercurius, {
    schema,
    loaders: graphqlLoaders as never,
    path: '/graphql',
    graphiql: options.devTools,
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
  app.graphql.addHook('preParsing', async (_schema, source) => { documentGuard.assert(source) })
  app.graphql.addHook('preValidation', async (_schema, document) => { assertValidationAffordable(document) })
  // Mercurius validates no subscription's document: the rules of HTTP's, before it starts (its `error` message).
  app.graphql.addHook('preSubscriptionExecution', async (schema, document, context) => {
    assertValidationAffordable(document)
    const [error] = validate(schema, document, [...specifiedRules, ...validationRules], validateOptions)
    if (error === undefined) return
    const { message, extensions } = formatGraphqlError(error, (context as Partial<GraphqlContext>).log ?? app.log,
      hideSuggestions)
    throw new GraphQLError(message, { extensions })
  })
  app.graphql.addHook('preExecution', async (_schema, document, context, variables) => {
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

export default fp(graphqlModule, {
  name: 'bff-graphql',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes', 'bff-upstreams', 'bff-change-feed'],
  decorators: { fastify: ['verifyApiKey', 'verifyJwt', 'store', 'quotes', 'aggregator', 'changeFeed'] },
  encapsulate: true
})

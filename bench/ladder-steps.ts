/** The rungs of the cost ladder, in the order they are stacked. */
export interface Rung {
  layer: string
  /** What the rung adds, for the report. */
  adds: string
  /** `jwt`: stacks on the rungs before the API-key guard and serves `GET /auth/profile` instead. */
  branch?: 'jwt'
  /** Served by the real service (`dist/server.js`) rather than by `bench/ladder-server.ts`. */
  service?: true
}

export const LADDER: readonly Rung[] = [
  {
    layer: 'bare route',
    adds: 'Fastify, one route answering a fixed portfolio with JSON.stringify, no hooks, no logger'
  },
  { layer: 'security headers', adds: "a JSON API's security headers, prepared once, set by a callback onRequest hook" },
  { layer: 'CORS', adds: '@fastify/cors with one allowed origin' },
  { layer: 'rate limit', adds: '@fastify/rate-limit, in memory, per principal or IP' },
  { layer: 'load shedding', adds: '@fastify/under-pressure (event-loop delay and heap)' },
  { layer: 'request id', adds: 'x-request-id taken or generated, echoed' },
  {
    layer: 'access log at info',
    adds: 'pino at info, one line per request, the service destination: one write per turn'
  },
  { layer: 'API-key guard', adds: 'verifyApiKey (SHA-256 digest, constant-time compare)' },
  { layer: 'store read', adds: 'the portfolio with its assets, one SQL statement on SQLite (file)' },
  { layer: 'response schema', adds: 'params validation and fast-json-stringify instead of JSON.stringify' },
  {
    layer: 'full service: GET /portfolios/:id',
    adds: 'everything else the service registers (error handler, OpenAPI, modules, …)',
    service: true
  },
  {
    layer: 'JWT guard',
    adds: 'verifyJwt instead of the API key (token cache hit), GET /auth/profile with its schema',
    branch: 'jwt'
  },
  {
    layer: 'full service: GET /auth/profile',
    adds: 'everything else the service registers',
    branch: 'jwt',
    service: true
  }
]

export const LADDER_SECRET = 'ladder-jwt-secret-0123456789abcdef0123456789'
export const LADDER_API_KEY = 'ladder-key'

/** The layers a rung stacks: every earlier rung of its branch, the JWT rung on those before the API-key guard. */
export function layersOf (step: number): string[] {
  const rung = LADDER[step]
  if (rung?.branch !== 'jwt') return LADDER.slice(0, step + 1).filter(r => r.branch !== 'jwt').map(r => r.layer)
  const apiKey = LADDER.findIndex(r => r.layer === 'API-key guard')
  return [...LADDER.slice(0, apiKey).map(r => r.layer), 'JWT guard']
}

import type { FastifyBaseLogger } from 'fastify'
import { UpstreamUnavailableError, upstreamQuotaSpent } from '../errors.js'
import { retryAfterSecondsOf, type QueryValue, type UpstreamClient, type UpstreamResponse } from '../upstream/client.js'

/** How long a spent quota keeps brapi alone when its answer names no `Retry-After`. */
const QUOTA_RETRY_SECONDS = 60
/** At most one error line this often about a refused BRAPI_TOKEN, however many requests it fails. */
const TOKEN_LOG_INTERVAL_MS = 60_000

/**
 * brapi.dev's refusals, told apart once for every endpoint (docs/api.md#brapi-failures): the token
 * travels as a Bearer header (never in the query, where it would end up in logs). A spent quota
 * (429, or 402 "limit exceeded") answers 503 with brapi's `Retry-After` (60 s when it names none)
 * and closes this instance's door to brapi until then: no request is sent meanwhile. A refused
 * token (401, 403) answers 502 and logs one error line a minute naming BRAPI_TOKEN — unless the
 * caller reads it as a plan without the endpoint (`planRefusals`: the SELIC and the IPCA, which
 * brapi's cheaper plans lack). Every other answer (2xx, 400, 404, …) is the caller's to read; 5xx,
 * timeouts and unreachable are the upstream client's 502/504.
 */
export class BrapiClient {
  private closedUntilMs = 0
  private tokenLoggedAtMs = -Infinity

  constructor (
    private readonly client: UpstreamClient,
    private readonly token: string | undefined,
    private readonly now: () => number = Date.now
  ) {}

  async get (
    path: string,
    query: Record<string, QueryValue> | undefined,
    log: FastifyBaseLogger,
    { planRefusals = false }: { planRefusals?: boolean } = {}
  ): Promise<UpstreamResponse> {
    const waitMs = this.closedUntilMs - this.now()
    if (waitMs > 0) throw upstreamQuotaSpent(Math.ceil(waitMs / 1000))
    const response = await this.client.call({
      method: 'GET',
      path,
      query,
      headers: {
        accept: 'application/json',
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` })
      },
      log
    })
    const status = response.status
    if (status === 429 || status === 402) {
      const seconds = Math.max(1, retryAfterSecondsOf(response.rateLimitHeaders, this.now()) ?? QUOTA_RETRY_SECONDS)
      this.closedUntilMs = Math.max(this.closedUntilMs, this.now() + seconds * 1000)
      log.warn({ upstream: 'brapi', status, retryAfterSeconds: seconds },
        'brapi\'s quota is spent: no request goes to brapi until Retry-After')
      throw upstreamQuotaSpent(seconds)
    }
    if ((status === 401 || status === 403) && !planRefusals) {
      if (this.now() - this.tokenLoggedAtMs >= TOKEN_LOG_INTERVAL_MS) {
        this.tokenLoggedAtMs = this.now()
        log.error({ upstream: 'brapi', status, path },
          'brapi refused BRAPI_TOKEN: check the token and that its plan covers this endpoint')
      }
      throw new UpstreamUnavailableError()
    }
    return response
  }
}

import type { FastifyBaseLogger } from 'fastify'
import {
  AggregatorNotConfiguredError,
  AggregatorRefusedError,
  UpstreamUnavailableError,
  rateLimitedFor,
  withRetryAfter
} from '../errors.js'
import type { KeyedBudget, SharedBudget } from './budget.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import {
  jsonObject,
  retryAfterSecondsOf,
  type UpstreamClient,
  type UpstreamRequest,
  type UpstreamResponse
} from './client.js'
import type { RelayClient, RelayedResponse } from './relay.js'
import { MemoryCache } from '../cache/memory-cache.js'

/** Pluggy's API keys live two hours; a key without a readable `exp` is taken to live that long. */
const DEFAULT_KEY_LIFETIME_MS = 2 * 60 * 60 * 1000
/**
 * Renewed this long before its `exp` (docs/aggregator.md): the clocks here and at the aggregator
 * may differ by minutes, and a key must not lapse on its way. At most a quarter of the key's
 * life, so that a short-lived key still serves most of it rather than being exchanged per call.
 */
const RENEWAL_MARGIN_MS = 5 * 60 * 1000
/** Pluggy's 429s say `Retry-After: 60` ("always 60", its rate-limit page): the wait when a refusal names none. */
const DEFAULT_REFUSAL_SECONDS = 60
/** The one key of {@link AggregatorApi}'s cache of its API key. */
const API_KEY = 'api-key'

interface CachedKey {
  value: string
  /** Its `exp`, in ms. */
  expiresAt: number
  /** When it is due for renewal: `exp` less the margin. */
  renewAt: number
}

/** An exchange the aggregator refused for a while (429, 403): until then callers get its answer, nothing is sent. */
interface Refusal {
  untilMs: number
  answer: (seconds: number) => Error
}

/** `exp` of a JWT-shaped key, read without verification (only to plan the renewal). */
function expiryOf (apiKey: string, now: number): number {
  const payload = apiKey.split('.')[1]
  if (payload !== undefined) {
    try {
      const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp
      if (typeof exp === 'number' && Number.isFinite(exp)) return exp * 1000
    } catch {
      // Not a JWT: fall back to the documented lifetime.
    }
  }
  return now + DEFAULT_KEY_LIFETIME_MS
}

export interface AggregatorCredentials {
  clientId: string
  clientSecret: string
}

/** A request made for a principal (`user:<id>`, `client:<id>`), which spends from that principal's share too. */
export interface AggregatorRequest extends UpstreamRequest {
  principal?: string
}

export interface AggregatorApiOptions {
  /** got: the service's own calls (the key exchange, item lookups). */
  client: UpstreamClient
  /** undici: what is relayed to a caller (`POST /aggregator`, connect tokens). */
  relayClient: RelayClient
  credentials?: AggregatorCredentials
  /** Every request to the aggregator spends from it (the aggregator's limit is per source IP). */
  budget?: SharedBudget
  /** Each principal's share of `budget`, checked before it: one caller cannot spend everyone's. */
  principalBudget?: KeyedBudget
  telemetry?: Telemetry
  now?: () => number
}

/**
 * The aggregator behind its API key: `POST /auth {clientId, clientSecret}` → `apiKey`, sent as
 * `X-API-KEY`. The key is cached and renewed before its `exp` (less a margin), and once more
 * after a 401 (Pluggy's "your API key is wrong") or a 403 with a key due for renewal — never
 * for a 403 about a resource. All concurrent callers share one exchange in flight, and an
 * exchange refused with 429 or 403 is not tried again before its `Retry-After`. Every request,
 * key exchanges included, spends from `budget` (the aggregator's own limit is per source IP,
 * shared by every instance): past it the caller gets a 429 and nothing is sent. {@link call}
 * goes through got and parses the answer for the service; {@link relay} through undici, keeping
 * the bytes for the caller.
 */
export class AggregatorApi {
  readonly client: UpstreamClient
  private readonly relayClient: RelayClient
  private readonly credentials: AggregatorCredentials | undefined
  private readonly budget: SharedBudget | undefined
  private readonly principalBudget: KeyedBudget | undefined
  private readonly telemetry: Telemetry
  private readonly now: () => number
  /** The API key, a use of the one mechanism (src/cache/memory-cache.ts): kept until due, one exchange at a time. */
  private readonly keys: MemoryCache<CachedKey>
  private refusal: Refusal | undefined

  constructor (options: AggregatorApiOptions) {
    this.client = options.client
    this.relayClient = options.relayClient
    this.credentials = options.credentials
    this.budget = options.budget
    this.principalBudget = options.principalBudget
    this.telemetry = options.telemetry ?? NO_TELEMETRY
    this.now = options.now ?? Date.now
    this.keys = new MemoryCache<CachedKey>({
      name: 'aggregator_key',
      maxEntries: 1,
      ttlMs: (key, startedAt) => key.renewAt - startedAt,
      telemetry: this.telemetry,
      now: this.now
    })
  }

  /**
   * Spends one request from the principal's share, then from the budget, or throws 429 when
   * either is spent (nothing is sent then). A principal past its share spends nothing of the
   * budget, so the others keep being served.
   */
  private async spend (request: AggregatorRequest): Promise<void> {
    if (request.principal !== undefined && this.principalBudget !== undefined) {
      const wait = await this.principalBudget.take(request.principal, request.log)
      if (wait !== undefined) {
        this.telemetry.rateLimited('aggregator_principal')
        request.log.warn({ upstream: 'aggregator' }, 'aggregator budget of this principal spent for this minute')
        throw rateLimitedFor(wait)
      }
    }
    const wait = await this.budget?.take(request.log)
    if (wait !== undefined) {
      this.telemetry.rateLimited('aggregator')
      request.log.warn({ upstream: 'aggregator' }, 'aggregator budget spent for this minute')
      throw rateLimitedFor(wait)
    }
  }

  private async send (request: AggregatorRequest): Promise<UpstreamResponse> {
    await this.spend(request)
    return await this.client.call(request)
  }

  get configured (): boolean {
    return this.credentials !== undefined
  }

  /**
   * A request with the API key over got (docs/api.md#relays applies); renews the key and retries
   * once if the answer says the key is no longer good.
   */
  async call (request: AggregatorRequest): Promise<UpstreamResponse> {
    return await this.withCurrentKey(request, async keyed => await this.send(keyed))
  }

  /** The same, over the relay client: the answer keeps the upstream's bytes for the caller. */
  async relay (request: AggregatorRequest): Promise<RelayedResponse> {
    return await this.withCurrentKey(request, async keyed => {
      await this.spend(keyed)
      return await this.relayClient.call(keyed)
    })
  }

  private async withCurrentKey<T extends { status: number }> (
    request: AggregatorRequest, send: (keyed: AggregatorRequest) => Promise<T>
  ): Promise<T> {
    const key = await this.currentKey(request.log)
    const response = await send(this.withKey(request, key.value))
    if (!this.keyRefused(response.status, key)) return response
    const renewed = await this.renew(key, request.log)
    return await send(this.withKey(request, renewed.value))
  }

  /**
   * Whether an answer is about the key: a 401 is (Pluggy's error codes: "your API key is wrong");
   * a 403 only once the key is due for renewal (as Pluggy's Java SDK renews only an expired
   * key), otherwise it is about the resource (another application's item, an IP not allowed).
   */
  private keyRefused (status: number, key: CachedKey): boolean {
    return status === 401 || (status === 403 && key.renewAt <= this.now())
  }

  private withKey (request: AggregatorRequest, apiKey: string): AggregatorRequest {
    return { ...request, headers: { ...request.headers, 'x-api-key': apiKey } }
  }

  private async currentKey (log: FastifyBaseLogger): Promise<CachedKey> {
    return await this.keys.get(API_KEY, async () => await this.exchange(log))
  }

  /** Replaces `stale` (unless another caller already did) with one `POST /auth` for everyone. */
  private async renew (stale: CachedKey, log: FastifyBaseLogger): Promise<CachedKey> {
    if (this.keys.peek(API_KEY) === stale) this.keys.forget(API_KEY)
    return await this.currentKey(log)
  }

  private async exchange (log: FastifyBaseLogger): Promise<CachedKey> {
    if (this.credentials === undefined) throw new AggregatorNotConfiguredError()
    const refused = this.refusal
    if (refused !== undefined && refused.untilMs > this.now()) {
      throw refused.answer(Math.ceil((refused.untilMs - this.now()) / 1000))
    }
    const response = await this.send({
      method: 'POST',
      path: 'auth',
      json: { clientId: this.credentials.clientId, clientSecret: this.credentials.clientSecret },
      log
    })
    const apiKey = jsonObject(response.body)?.apiKey
    if (response.status !== 200 || typeof apiKey !== 'string' || apiKey.length === 0) {
      // The status and Pluggy's constant (CLIENT_IP_NOT_ALLOWED…), never the body: it is no business of the caller's.
      const codeDescription = jsonObject(response.body)?.codeDescription
      const constant = typeof codeDescription === 'string' && /^[A-Z_]{1,64}$/.test(codeDescription)
        ? codeDescription
        : undefined
      log.error({ upstream: 'aggregator', status: response.status, codeDescription: constant },
        'aggregator refused the API key exchange')
      throw this.refused(response)
    }
    this.refusal = undefined
    const now = this.now()
    const expiresAt = expiryOf(apiKey, now)
    const margin = Math.min(RENEWAL_MARGIN_MS, Math.max(0, expiresAt - now) / 4)
    return { value: apiKey, expiresAt, renewAt: expiresAt - margin }
  }

  /**
   * What a refused exchange answers: a 429 is 429 and a 403 (Pluggy's IP allowlist) is 503, both
   * with the aggregator's `Retry-After` (60 s when it names none), remembered until then; any
   * other refusal (wrong credentials, an answer without a key) is 502, and the next call tries again.
   */
  private refused (response: UpstreamResponse): Error {
    if (response.status !== 429 && response.status !== 403) return new UpstreamUnavailableError()
    const seconds = retryAfterSecondsOf(response.rateLimitHeaders, this.now()) ?? DEFAULT_REFUSAL_SECONDS
    const answer = response.status === 429
      ? rateLimitedFor
      : (wait: number) => withRetryAfter(new AggregatorRefusedError(), wait)
    this.refusal = { untilMs: this.now() + seconds * 1000, answer }
    return answer(seconds)
  }
}

import type { FastifyBaseLogger } from 'fastify'
import { UpstreamUnavailableError, rateLimitedFor } from '../errors.js'
import type { AggregatorApi } from './aggregator.js'
import { jsonObject, retryAfterSecondsOf, type JsonValue, type UpstreamResponse } from './client.js'

/** Pluggy's largest page (pluggy-node `PageFilters`: "Maximum supported: 500"), as its SDK reads every page. */
const PAGE_SIZE = 500
/** Pages read of one list at most: 100 000 entries, far past a year of one investment's history. */
const MAX_PAGES = 200
/** Pluggy's 429s say `Retry-After: 60` (its rate-limit page): the wait when one names none. */
const DEFAULT_RETRY_AFTER_SECONDS = 60

/** Who reads: the asking request's logger (or the job's), and the principal whose share of the budget it spends. */
export interface Reader {
  log: FastifyBaseLogger
  principal: string
}

/**
 * What an answer says, for the reads of an import: the JSON object, or `undefined` when the aggregator does not
 * give it (404, or another 4xx about the id: a malformed one, another application's). Its 429 is the service's 429
 * with its `Retry-After` (60 s when it names none); a 401 left after the key was renewed, a 408 or an answer that
 * is no JSON object is 502; a 5xx (502) and a timeout (504) are thrown by the client.
 */
function objectOf (
  response: UpstreamResponse, path: string, log: FastifyBaseLogger
): Record<string, JsonValue> | undefined {
  const { status } = response
  if (status === 429) {
    log.warn({ upstream: 'aggregator', path }, 'aggregator rate-limited an import read')
    throw rateLimitedFor(retryAfterSecondsOf(response.rateLimitHeaders) ?? DEFAULT_RETRY_AFTER_SECONDS)
  }
  if (status >= 400 && status !== 401 && status !== 408) return undefined
  const object = status === 200 ? jsonObject(response.body) : undefined
  if (object === undefined) {
    log.warn({ upstream: 'aggregator', path, status }, 'aggregator answered an import read with no usable object')
    throw new UpstreamUnavailableError()
  }
  return object
}

/**
 * The aggregator's items and investments as an import reads them (docs/aggregator.md, "Investments"), through the
 * service's aggregator client: its API key, its budget (each read spends from the budget and from the portfolio
 * owner's share of it) and its answers' mapping. Lists are read page after page of {@link PAGE_SIZE} until the
 * last (`totalPages`), as pluggy-node's `fetchAllInvestmentTransactions` reads them.
 */
export class AggregatorInvestments {
  constructor (private readonly aggregator: Pick<AggregatorApi, 'call'>) {}

  /** The item's `clientUserId` (null: none); `undefined` when the aggregator does not give the item. */
  async ownerOf (itemId: string, reader: Reader): Promise<string | null | undefined> {
    const item = await this.read(`items/${encodeURIComponent(itemId)}`, {}, reader)
    if (item === undefined) return undefined
    return typeof item.clientUserId === 'string' ? item.clientUserId : null
  }

  /** Every investment of the item, as sent; `undefined` when the aggregator does not give them. */
  async investments (itemId: string, reader: Reader): Promise<JsonValue[] | undefined> {
    return await this.pages('investments', { itemId }, reader)
  }

  /** Every transaction of the investment, as sent; `undefined` when the aggregator does not give them. */
  async transactions (investmentId: string, reader: Reader): Promise<JsonValue[] | undefined> {
    return await this.pages(`investments/${encodeURIComponent(investmentId)}/transactions`, {}, reader)
  }

  private async pages (
    path: string, query: Record<string, string>, reader: Reader
  ): Promise<JsonValue[] | undefined> {
    const results: JsonValue[] = []
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await this.read(path, { ...query, page: String(page), pageSize: String(PAGE_SIZE) }, reader)
      if (answer === undefined) return undefined
      const { results: items, totalPages } = answer
      if (!Array.isArray(items)) {
        reader.log.warn({ upstream: 'aggregator', path }, 'aggregator page without results')
        throw new UpstreamUnavailableError()
      }
      results.push(...items)
      // The last page: as many as `totalPages` says, or one that is not full when it says nothing.
      const last = typeof totalPages === 'number' ? page >= totalPages : items.length < PAGE_SIZE
      if (last) return results
    }
    throw new Error(`aggregator list ${path} longer than ${MAX_PAGES} pages of ${PAGE_SIZE}`)
  }

  private async read (
    path: string, query: Record<string, string>, { log, principal }: Reader
  ): Promise<Record<string, JsonValue> | undefined> {
    const response = await this.aggregator.call({ method: 'GET', path, query, log, principal })
    return objectOf(response, path, log)
  }
}

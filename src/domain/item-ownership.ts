import { MemoryCache } from '../cache/memory-cache.js'
import { ForbiddenError, UpstreamUnavailableError, rateLimitedFor } from '../errors.js'
import type { AggregatorApi } from '../upstream/aggregator.js'
import {
  jsonObject, retryAfterSecondsOf, type JsonObject, type JsonValue, type QueryValue
} from '../upstream/client.js'
import { underPrefix } from '../upstream/endpoint.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import { principalKey } from './access.js'
import type { Log } from './ports.js'

export const NOT_YOUR_ITEM = 'Acesso negado a itens de outro usuário'
const UNSCOPED = 'Informe o item (itemId ou accountId) desta consulta'

/** Reference data of the aggregator, the same for every caller. */
const PUBLIC_PREFIXES = ['/connectors', '/categories']
/** Resources that carry the `itemId` they belong to. */
const ITEM_RESOURCES = /^\/(accounts|investments|loans|identity|consents)\/([^/]+)/
const TRANSACTION = /^\/(?:v2\/)?transactions\/([^/]+)/
const ITEM = /^\/items\/([^/]+)/
/** A credit card bill carries neither its account nor its item (pluggy-node `CreditCardBills`): no owner to check. */
const UNOWNED_RESOURCE = /^\/bills\/[^/]+/

const CACHE_TTL_MS = 60_000
const CACHE_MAX_ENTRIES = 10_000
/** Pluggy's 429s say `Retry-After: 60` (its rate-limit page): the wait when one names none. */
const DEFAULT_RETRY_AFTER_SECONDS = 60

/**
 * What a lookup learnt: the resource, `none` when the aggregator has no such resource (404), or
 * `refused` when it refused the id otherwise (another 4xx: a malformed id, another's resource).
 */
type Lookup = JsonObject | 'none' | 'refused'

function field (found: Lookup, name: string): string | undefined {
  const value = typeof found === 'string' ? undefined : found[name]
  return typeof value === 'string' ? value : undefined
}

/** An item's owner as a lookup found it; `known` false when the aggregator refused the id (not kept). */
interface ItemOwner {
  owner: string | null
  known: boolean
}

/** Who a lookup is made for: the asking request's logger, and the principal whose share it spends. */
interface Asker {
  log: Log
  principal: string
}

function askerOf (clientId: string, log: Log): Asker {
  return { log, principal: principalKey({ type: 'client', id: clientId }) }
}

/**
 * Decides whether a `client` may reach an aggregator path (docs/api.md#aggregator, OWASP API1): one API key
 * reaches every item of the application, so each item a call names (in its path, `itemId` or
 * `accountId`) must have the client's id as its `clientUserId`. Answers are cached briefly.
 */
export class ItemOwnership {
  /** Each item's owner (`null`: none), kept CACHE_TTL_MS, the least recently used dropped first. */
  private readonly owners: MemoryCache<ItemOwner>

  constructor (
    private readonly aggregator: Pick<AggregatorApi, 'call'>,
    telemetry: Telemetry = NO_TELEMETRY
  ) {
    this.owners = new MemoryCache<ItemOwner>({
      name: 'item_ownership',
      maxEntries: CACHE_MAX_ENTRIES,
      ttlMs: CACHE_TTL_MS,
      keeps: owner => owner.known,
      telemetry
    })
  }

  /**
   * `log` is the asking request's logger: the lookups' log lines carry its request id. The
   * lookups are the client's calls to the aggregator: they spend from its share of the budget.
   */
  async assertMayReach (
    clientId: string, path: string, fields: Record<string, QueryValue | JsonValue>, log: Log
  ): Promise<void> {
    const asker = askerOf(clientId, log)
    const items = await this.itemsNamed(path, fields, asker)
    if (items === 'public') return
    if (items.length === 0) throw new ForbiddenError(UNSCOPED)
    for (const itemId of items) await this.assertOwnedBy(clientId, itemId, asker)
  }

  async assertOwner (clientId: string, itemId: string, log: Log): Promise<void> {
    await this.assertOwnedBy(clientId, itemId, askerOf(clientId, log))
  }

  private async assertOwnedBy (clientId: string, itemId: string, asker: Asker): Promise<void> {
    if (await this.ownerOf(itemId, asker) !== clientId) throw new ForbiddenError(NOT_YOUR_ITEM)
  }

  private async itemsNamed (
    path: string, fields: Record<string, QueryValue | JsonValue>, asker: Asker
  ): Promise<string[] | 'public'> {
    if (PUBLIC_PREFIXES.some(prefix => underPrefix(path, prefix))) return 'public'
    if (UNOWNED_RESOURCE.test(path)) throw new ForbiddenError(NOT_YOUR_ITEM)
    const items: string[] = []
    const item = ITEM.exec(path)?.[1]
    if (item !== undefined) items.push(item)
    const resource = ITEM_RESOURCES.exec(path)
    if (resource?.[1] !== undefined && resource[2] !== undefined) {
      items.push(await this.itemOf(`/${resource[1]}/${resource[2]}`, asker))
    }
    const transaction = TRANSACTION.exec(path)?.[1]
    if (transaction !== undefined) {
      const accountId = field(await this.fetch(`/transactions/${transaction}`, asker), 'accountId')
      if (accountId === undefined) throw new ForbiddenError(NOT_YOUR_ITEM)
      items.push(await this.itemOf(`/accounts/${accountId}`, asker))
    }
    if (typeof fields.itemId === 'string') items.push(fields.itemId)
    if (typeof fields.accountId === 'string') {
      items.push(await this.itemOf(`/accounts/${encodeURIComponent(fields.accountId)}`, asker))
    }
    return items
  }

  private async itemOf (resourcePath: string, asker: Asker): Promise<string> {
    const itemId = field(await this.fetch(resourcePath, asker), 'itemId')
    if (itemId === undefined) throw new ForbiddenError(NOT_YOUR_ITEM)
    return itemId
  }

  /**
   * The item's `clientUserId` (null: nobody's). Only what the aggregator said about the item is
   * cached — the item itself, or its 404 — never an answer that says nothing about the owner.
   * Concurrent checks of one item share one lookup, made for the first asker (its budget, its log).
   */
  private async ownerOf (itemId: string, asker: Asker): Promise<string | null> {
    const { owner } = await this.owners.get(itemId, async () => {
      const found = await this.fetch(`/items/${encodeURIComponent(itemId)}`, asker)
      return { owner: field(found, 'clientUserId') ?? null, known: found !== 'refused' }
    })
    return owner
  }

  /**
   * A lookup made for the check. "Unknown" is never "nobody's" (docs/aggregator.md): the
   * aggregator's 429 is the caller's 429 with its `Retry-After`; a 5xx, a 401 left after the key
   * was renewed (the service's key refused), a 408, a 2xx/3xx other than a 200 with a JSON object
   * is 502; a timeout 504 (thrown by the client). Another 4xx (a malformed id, a 403 about the
   * item) refuses the id: 403 for the caller, not cached.
   */
  private async fetch (path: string, { log, principal }: Asker): Promise<Lookup> {
    const response = await this.aggregator.call({ method: 'GET', path, log, principal })
    const { status } = response
    if (status === 404) return 'none'
    if (status === 429) {
      log.warn({ upstream: 'aggregator', path }, 'aggregator rate-limited an ownership lookup')
      throw rateLimitedFor(retryAfterSecondsOf(response.rateLimitHeaders) ?? DEFAULT_RETRY_AFTER_SECONDS)
    }
    if (status >= 400 && status !== 401 && status !== 408) return 'refused'
    const object = status === 200 ? jsonObject(response.body) : undefined
    if (object === undefined) {
      log.warn({ upstream: 'aggregator', path, status }, 'aggregator answered a lookup with no usable object')
      throw new UpstreamUnavailableError()
    }
    return object
  }
}

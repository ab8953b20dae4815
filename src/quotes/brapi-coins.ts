import type { FastifyBaseLogger } from 'fastify'
import { jsonObject } from '../upstream/client.js'
import type { BrapiClient } from './brapi-client.js'
import { MemoryCache } from '../cache/memory-cache.js'
import type { Telemetry } from '../observability/telemetry.js'

/** brapi adds coins seldom: its list is asked again once a day. */
const COIN_LIST_TTL_MS = 24 * 60 * 60 * 1000
/** A list brapi would not give (a plan without coins, brapi down) is asked again after this. */
const COIN_LIST_RETRY_MS = 10 * 60 * 1000
/** Symbols told to be coins by assets of type CRYPTO, at most (a bound on what stored data can make it hold). */
const MAX_DECLARED = 10_000

/**
 * Which symbols brapi prices as coins (`/api/v2/crypto`) rather than as B3 tickers (`/api/quote`):
 * those an asset of type CRYPTO holds (told by the domain, remembered for the instance's life) and
 * those brapi lists at `/api/v2/crypto/available` (asked once a day, one request however many ask
 * at once). Without the list (refused, unusable, or brapi failing) only the declared ones and those
 * of the last list brapi gave are coins, and the list is asked again 10 minutes later; a spent quota
 * is the caller's error.
 */
export class CoinDirectory {
  private readonly declared = new Set<string>()
  /** What brapi listed last: kept when a later asking fails. */
  private listed: ReadonlySet<string> = new Set()
  /**
   * Whether brapi's list was had, a use of the one mechanism (src/cache/memory-cache.ts): kept a
   * day when it was, ten minutes when not, one asking however many wait for it.
   */
  private readonly asked: MemoryCache<boolean>

  constructor (private readonly brapi: BrapiClient, now: () => number, telemetry: Telemetry) {
    this.asked = new MemoryCache<boolean>({
      name: 'coin_list',
      maxEntries: 1,
      ttlMs: listed => listed ? COIN_LIST_TTL_MS : COIN_LIST_RETRY_MS,
      telemetry,
      now
    })
  }

  /** Remembers `symbols` as coins; answers those that were not coins already. */
  declare (symbols: readonly string[]): string[] {
    const fresh: string[] = []
    for (const symbol of symbols) {
      const coin = symbol.toUpperCase()
      if (this.declared.has(coin) || this.declared.size >= MAX_DECLARED) continue
      this.declared.add(coin)
      if (!this.listed.has(coin)) fresh.push(symbol)
    }
    return fresh
  }

  /** Which of `symbols` are coins; reads brapi's list first when one of them was not declared. */
  async among (symbols: readonly string[], log: FastifyBaseLogger): Promise<Set<string>> {
    if (symbols.some(symbol => !this.declared.has(symbol.toUpperCase()))) await this.list(log)
    return new Set(symbols.filter(symbol => {
      const upper = symbol.toUpperCase()
      return this.declared.has(upper) || this.listed.has(upper)
    }))
  }

  private async list (log: FastifyBaseLogger): Promise<void> {
    await this.asked.get('list', async () => await this.load(log))
  }

  /** Asks brapi's list: whether it gave one. */
  private async load (log: FastifyBaseLogger): Promise<boolean> {
    let coins: unknown
    try {
      const response = await this.brapi.get('api/v2/crypto/available', undefined, log)
      coins = response.status === 200 ? jsonObject(response.body)?.coins : undefined
      if (!Array.isArray(coins)) log.warn({ upstream: 'brapi', status: response.status }, 'brapi gave no list of coins')
    } catch (error) {
      if ((error as { code?: unknown }).code === 'BFF_UPSTREAM_QUOTA') throw error
      log.warn({ err: error, upstream: 'brapi' }, 'brapi\'s list of coins is unavailable: only CRYPTO assets are coins')
    }
    if (!Array.isArray(coins)) return false
    this.listed = new Set(coins.filter(coin => typeof coin === 'string').map(coin => coin.toUpperCase()))
    return true
  }
}

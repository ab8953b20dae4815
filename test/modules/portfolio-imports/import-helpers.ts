import type { App } from '../../../src/app.js'
import type { Asset } from '../../../src/schemas/asset.js'
import type { InvestmentImport } from '../../../src/schemas/import.js'
import type { AssetTransaction } from '../../../src/schemas/transaction.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, type FakePluggy } from '../../fixtures/fake-pluggy.js'
import { asUser } from '../../fixtures/owners.js'
import { until } from '../../fixtures/until.js'

/** Helpers shared by the import suites: an app whose queue looks often and retries soon, and an import's reads. */

/** The aggregator's credentials, user tokens, and a queue looked at every few milliseconds, retried from 20 ms. */
export function importConfig (pluggy: FakePluggy, more: Record<string, string> = {}): Record<string, string> {
  return {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
    PORTFOLIO_ACCESS: 'user',
    JOB_POLL_MS: '10',
    IMPORT_RETRY_MS: '20',
    AGGREGATOR_VERIFY_RETRY_MS: '20',
    ...more
  }
}

/** A new portfolio of `userId`, made with its own token. */
export async function portfolioOf (app: App, userId: string): Promise<string> {
  const res = await app.inject({
    method: 'POST', url: '/portfolios', headers: asUser(userId), payload: { name: `Carteira de ${userId}`, userId }
  })
  if (res.statusCode !== 201) throw new Error(`portfolio not created: ${res.statusCode} ${res.body}`)
  return (res.json() as { id: string }).id
}

/** `POST /portfolios/:id/imports` as `userId`. */
export async function askImport (app: App, userId: string, portfolioId: string, itemId: string) {
  return await app.inject({
    method: 'POST', url: `/portfolios/${portfolioId}/imports`, headers: asUser(userId), payload: { itemId }
  })
}

/** The import as `GET /portfolios/:id/imports/:importId` answers it. */
async function importOf (app: App, userId: string, portfolioId: string, importId: string) {
  const res = await app.inject({ url: `/portfolios/${portfolioId}/imports/${importId}`, headers: asUser(userId) })
  return res.json() as InvestmentImport
}

/**
 * The import, as the route answers it, once it ended (done or failed): a bounded poll on its row in the store (the
 * route's rate limit would refuse a poll of that many requests).
 */
export async function ended (app: App, userId: string, portfolioId: string, importId: string) {
  let last: InvestmentImport | undefined
  await until(`import ${importId} ended`, async () => {
    last = await app.store.imports.get(importId)
    return last?.status === 'done' || last?.status === 'failed'
  }, () => last)
  return await importOf(app, userId, portfolioId, importId)
}

/** Asks for an import and answers it once ended. */
export async function imported (app: App, userId: string, portfolioId: string, itemId: string) {
  const res = await askImport(app, userId, portfolioId, itemId)
  if (res.statusCode !== 202) throw new Error(`import not asked for: ${res.statusCode} ${res.body}`)
  return await ended(app, userId, portfolioId, (res.json() as InvestmentImport).id)
}

/** A portfolio's assets with their transactions (oldest first), by the aggregator's investment id. */
export async function holdingsOf (app: App, userId: string, portfolioId: string) {
  const headers = asUser(userId)
  const list = await app.inject({ url: `/portfolio-assets?portfolioId=${portfolioId}`, headers })
  const assets = list.json() as Asset[]
  const held = new Map<string, { asset: Asset, transactions: AssetTransaction[] }>()
  for (const asset of assets) {
    const res = await app.inject({ url: `/portfolio-assets/${asset.id}/transactions`, headers })
    held.set(asset.investmentId ?? asset.id, { asset, transactions: res.json() as AssetTransaction[] })
  }
  return held
}

import type { FastifyBaseLogger } from 'fastify'
import type { QueryValue, UpstreamResponse } from '../upstream/client.js'
import type { BrapiClient } from './brapi-client.js'

/** What brapi may answer a plan that lacks what a request asks for (docs/api.md#brapi-failures). */
const PLAN_REFUSALS = new Set([400, 401, 403])

/**
 * brapi's unadjusted figures, `includeRaw=true` (docs/api.md#corporate-events): `rawClose` of a daily history,
 * `rawRate` of a dividend, on the scale of the day's prices. brapi's Pro plan gives them; what another plan answers
 * is not written in its SDKs, so a request with them that is refused (400, 401, 403) is sent again without: when that
 * one is answered otherwise, the refusal was the plan's, and the instance asks without them from then on (logged once).
 */
export class RawFields {
  private given = true

  constructor (private readonly brapi: BrapiClient) {}

  /** `path` with `includeRaw=true` while the plan gives it, else without. */
  async get (path: string, query: Record<string, QueryValue>, log: FastifyBaseLogger): Promise<UpstreamResponse> {
    if (!this.given) return await this.brapi.get(path, query, log)
    const raw = await this.brapi.get(path, { ...query, includeRaw: 'true' }, log, { planRefusals: true })
    if (!PLAN_REFUSALS.has(raw.status)) return raw
    const plain = await this.brapi.get(path, query, log)
    if (plain.status !== raw.status && this.given) {
      this.given = false
      log.info({ upstream: 'brapi', status: raw.status },
        'brapi\'s plan gives no unadjusted prices and rates (includeRaw): closes and rates are restated by the ' +
        'service from the events it knows')
    }
    return plain
  }
}

import { randomUUID } from 'node:crypto'
import { now, type StoreHandle } from './handle.js'

export interface WebhookEvent {
  /** Idempotency key: the sender's eventId, or a digest of the payload. */
  eventKey: string
  event: string
  itemId: string | null
  status: string | null
  /** The payload as received, serialised. */
  payload: string
}

export interface AggregatorItem {
  itemId: string
  status: string | null
  lastEvent: string
  updatedAt: string
}

/** The aggregator's webhook events, each stored once, and the latest known state of each item. */
export class AggregatorEventRepository {
  constructor (private readonly handle: StoreHandle) {}

  /**
   * Stores a webhook event once per `eventKey` and, for item events, keeps the item's latest
   * event and status (a status-less event keeps the status known before). A redelivery stores
   * nothing and answers `stored: false`.
   */
  async record (event: WebhookEvent): Promise<{ stored: boolean }> {
    return await this.handle.db.transaction().execute(async trx => {
      const receivedAt = now()
      const inserted = await trx.insertInto('aggregator_webhook_events').values({
        id: randomUUID(),
        event_key: event.eventKey,
        event: event.event,
        item_id: event.itemId,
        payload: event.payload,
        received_at: receivedAt
      }).onConflict(oc => oc.column('event_key').doNothing()).returning('id').executeTakeFirst()
      if (inserted === undefined) return { stored: false }
      if (event.itemId !== null) {
        await trx.insertInto('aggregator_items')
          .values({ item_id: event.itemId, status: event.status, last_event: event.event, updated_at: receivedAt })
          .onConflict(oc => oc.column('item_id').doUpdateSet(eb => ({
            status: event.status === null ? eb.ref('aggregator_items.status') : eb.val(event.status),
            last_event: eb.ref('excluded.last_event'),
            updated_at: eb.ref('excluded.updated_at')
          })))
          .execute()
      }
      return { stored: true }
    })
  }

  async item (itemId: string): Promise<AggregatorItem | undefined> {
    const row = await this.handle.db.selectFrom('aggregator_items').selectAll().where('item_id', '=', itemId).executeTakeFirst()
    return row === undefined ? undefined : { itemId: row.item_id, status: row.status, lastEvent: row.last_event, updatedAt: row.updated_at }
  }

  async count (): Promise<number> {
    const row = await this.handle.db.selectFrom('aggregator_webhook_events').select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }
}

import { randomUUID } from 'node:crypto'
import { now, type StoreHandle } from './handle.js'

export interface WebhookEvent {
  /** Idempotency key: the sender's eventId, or a digest of the payload. */
  eventKey: string
  event: string
  itemId: string | null
  /** The payload as received, serialised. */
  payload: string
}

/** An item as the aggregator itself reported it (never as a webhook claimed). */
export interface VerifiedItem {
  itemId: string
  status: string
  clientUserId: string | null
  /** The event that made the service ask. */
  lastEvent: string
}

export interface AggregatorItem extends Omit<VerifiedItem, 'status'> {
  status: string | null
  updatedAt: string
}

/** The aggregator's webhook events, each stored once, and the latest known state of each item. */
export class AggregatorEventRepository {
  constructor (private readonly handle: StoreHandle) {}

  /**
   * Stores a webhook event once per `eventKey`; a redelivery stores nothing and answers
   * `stored: false`. Items change only through {@link saveVerifiedItem}.
   */
  async record (event: WebhookEvent): Promise<{ stored: boolean }> {
    const inserted = await this.handle.db.insertInto('aggregator_webhook_events').values({
      id: randomUUID(),
      event_key: event.eventKey,
      event: event.event,
      item_id: event.itemId,
      payload: event.payload,
      received_at: now()
    }).onConflict(oc => oc.column('event_key').doNothing()).returning('id').executeTakeFirst()
    return { stored: inserted !== undefined }
  }

  /** Keeps what the aggregator reported of an item; answers when it was kept. */
  async saveVerifiedItem (item: VerifiedItem): Promise<{ updatedAt: string }> {
    const values = {
      item_id: item.itemId,
      status: item.status,
      client_user_id: item.clientUserId,
      last_event: item.lastEvent,
      updated_at: now()
    }
    await this.handle.db.insertInto('aggregator_items').values(values)
      .onConflict(oc => oc.column('item_id').doUpdateSet({
        status: values.status,
        client_user_id: values.client_user_id,
        last_event: values.last_event,
        updated_at: values.updated_at
      }))
      .execute()
    return { updatedAt: values.updated_at }
  }

  async item (itemId: string): Promise<AggregatorItem | undefined> {
    const row = await this.handle.db
      .selectFrom('aggregator_items')
      .selectAll()
      .where('item_id', '=', itemId)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          itemId: row.item_id,
          status: row.status,
          clientUserId: row.client_user_id,
          lastEvent: row.last_event,
          updatedAt: row.updated_at
        }
  }

  async count (): Promise<number> {
    const row = await this.handle.db
      .selectFrom('aggregator_webhook_events')
      .select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
}

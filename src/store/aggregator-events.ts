import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { now, type StoreHandle } from './handle.js'

export interface WebhookEvent {
  /** Idempotency key: the sender's eventId, or a digest of the payload. */
  eventKey: string
  event: string
  itemId: string | null
  /** The payload as received, serialised. */
  payload: string
  /** How long the key names this event (a digest); without it, for good (an eventId). */
  keyHeldForMs?: number
  /** When it arrived (ISO 8601); now when absent. */
  receivedAt?: string
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
  /** When the aggregator confirmed the item deleted (its `item/deleted`, then a 404); null while it exists. */
  deletedAt: string | null
}

/** The aggregator's webhook events, each stored once, and the latest known state of each item. */
export class AggregatorEventRepository {
  constructor (private readonly handle: StoreHandle) {}

  /**
   * Stores a webhook event once per `eventKey`; a redelivery stores nothing and answers
   * `stored: false`. A key held for `keyHeldForMs` is free again after that: the older event
   * keeps its row under the key suffixed with `@<received_at>`, and the new one is stored (two
   * instances freeing it at once still store it once). Items change only through
   * {@link saveVerifiedItem} and {@link markItemDeleted}.
   */
  async record (event: WebhookEvent): Promise<{ stored: boolean }> {
    const receivedAt = event.receivedAt ?? now()
    if (event.keyHeldForMs !== undefined) {
      const heldSince = new Date(Date.parse(receivedAt) - event.keyHeldForMs).toISOString()
      await this.handle.db.updateTable('aggregator_webhook_events')
        .set({ event_key: sql<string>`event_key || '@' || received_at` })
        .where('event_key', '=', event.eventKey).where('received_at', '<=', heldSince).execute()
    }
    const inserted = await this.handle.db.insertInto('aggregator_webhook_events').values({
      id: randomUUID(),
      event_key: event.eventKey,
      event: event.event,
      item_id: event.itemId,
      payload: event.payload,
      received_at: receivedAt
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
        updated_at: values.updated_at,
        deleted_at: null
      }))
      .execute()
    return { updatedAt: values.updated_at }
  }

  /**
   * Marks a known item deleted (status `null`, `deletedAt`); an item never stored stays unknown
   * (nothing is made up). Answers when it was marked.
   */
  async markItemDeleted (itemId: string, lastEvent: string): Promise<{ updatedAt: string }> {
    const updatedAt = now()
    await this.handle.db.updateTable('aggregator_items')
      .set({ status: null, last_event: lastEvent, updated_at: updatedAt, deleted_at: updatedAt })
      .where('item_id', '=', itemId).execute()
    return { updatedAt }
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
          updatedAt: row.updated_at,
          deletedAt: row.deleted_at
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

import { FormatRegistry, Type, type Static } from '@sinclair/typebox'
import { TimestampOf } from './common.js'

/**
 * The statuses the aggregator gives an item (Pluggy's `Item.status`): an item answer with another
 * is one the service cannot use (docs/aggregator.md), so subscribers only ever see these.
 */
export const ITEM_STATUSES = [
  'UPDATED', 'UPDATING', 'WAITING_USER_INPUT', 'WAITING_USER_ACTION', 'MERGING', 'LOGIN_ERROR', 'OUTDATED'
] as const
export type ItemStatusValue = typeof ITEM_STATUSES[number]
const KNOWN_STATUSES = new Set<string>(ITEM_STATUSES)

export function isItemStatusValue (value: unknown): value is ItemStatusValue {
  return typeof value === 'string' && KNOWN_STATUSES.has(value)
}

/** The verified status of an aggregator item, pushed to subscribers each time a webhook about it arrives. */
export const ItemStatusSchema = Type.Object({
  itemId: Type.String({ description: 'The aggregator item' }),
  // Literals rather than one `enum`: the feed checks messages with TypeBox's compiler, which knows no `Unsafe`.
  status: Type.Union([Type.Union(ITEM_STATUSES.map(value => Type.Literal(value))), Type.Null()], {
    description: 'The status the aggregator itself reports for the item (never what a webhook claimed)'
  }),
  event: Type.String({ description: 'The webhook event that made the service ask' }),
  updatedAt: TimestampOf('When the service verified the status')
}, { title: 'AggregatorItemStatus' })
export type ItemStatus = Static<typeof ItemStatusSchema>

// TypeBox checks a format only once it is registered; the service's timestamps are ISO 8601.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', value => !Number.isNaN(Date.parse(value)))

/** The events that delete an item: Pluggy's `item/deleted`, and the same in the dotted shape (`item.deleted`). */
const DELETION_EVENTS = new Set(['item/deleted', 'item.deleted'])

export function isDeletionEvent (event: string): boolean {
  return DELETION_EVENTS.has(event)
}

import { NotFoundError, NotFoundFeminineError } from '../errors.js'
import type { Trade } from '../schemas/average-cost.js'
import { pageOf } from '../schemas/common.js'
import type { AssetTransaction, CreateTransactionInput } from '../schemas/transaction.js'
import type { Access } from './access.js'
import { assertInputRules } from './assets.js'
import { found, possibleId, type PageRequest } from './common.js'
import type { EventBooks } from './event-books.js'
import { bounded, dayOf, nextSeq, positionColumns, positionWithEvents, reconciledTrades } from './holdings.js'
import { ifReached, reachable, reached } from './ownership.js'
import type { DataStore } from './ports.js'

const missingAsset = (): Error => new NotFoundError('Ativo')
const missingTransaction = (): Error => new NotFoundFeminineError('Transação')

/**
 * A validated transaction as the store takes it (docs/api.md#inputs): quantity and price of at
 * most 8 decimals, a fee of at most 2 (0 when absent), a date from 1990-01-01 to today.
 */
export function createTransactionInput (input: CreateTransactionInput): Trade {
  assertInputRules(input)
  return { type: input.type, date: input.date, quantity: input.quantity, price: input.price, fee: input.fee ?? 0 }
}

/**
 * The dated buys and sales of assets (docs/api.md#transactions), each method within the caller's
 * portfolio scope (docs/api.md#whose-portfolios). An unknown asset, or another user's, is
 * NOT_FOUND (`Ativo não encontrado`), an unknown transaction of it NOT_FOUND (`Transação não
 * encontrada`); a sale of more than is held at its date, or a removal that would leave less than
 * nothing held at some date, is INSUFFICIENT_QUANTITY and changes nothing — what is held counting the corporate
 * events of the asset's symbol (docs/api.md#corporate-events). Every change sets the asset's quantity, price (the
 * average price) and value, and touches its portfolio. A change is one write of the store: the asset's row read once,
 * under its lock, for the scope and the replay of its transactions (measured in BENCHMARKS.md, "Asset writes": it
 * reads every transaction of the asset).
 */
export class TransactionService {
  constructor (
    private readonly store: Pick<DataStore, 'transactions' | 'assets' | 'write'>,
    private readonly events: Pick<EventBooks, 'during'>
  ) {}

  /** The asset's transactions in the order they count: by date, then as recorded. */
  async list (access: Access, assetId: string, page: PageRequest): Promise<AssetTransaction[]> {
    const scope = await access.portfolioScope()
    return await found(assetId, missingAsset, async id =>
      await reachable(scope, id, this.store.assets) ? await this.store.transactions.list(id, pageOf(page)) : undefined)
  }

  async add (access: Access, assetId: string, input: CreateTransactionInput): Promise<AssetTransaction> {
    const scope = await access.portfolioScope()
    const trade = createTransactionInput(input)
    return await found(assetId, missingAsset, async id => await this.events.during(async eventsOf =>
      await this.store.write(async work => {
        const locked = ifReached(scope, await work.assets.lockForWrite(id), asset => asset.userId)
        if (locked === undefined) return undefined
        const events = eventsOf(locked.value.symbol, dayOf(work.now))
        const recorded = await reconciledTrades(work, locked)
        const added = bounded(trade)
        const held = positionWithEvents(recorded, [...recorded, added], events)
        const transaction = await work.trades.insert(id, added, nextSeq(recorded))
        await work.assets.setPosition(id, positionColumns(held.position, held.events))
        await work.portfolios.touch(locked.value.portfolioId)
        return transaction
      })))
  }

  async remove (access: Access, assetId: string, transactionId: string): Promise<void> {
    const scope = await access.portfolioScope()
    if (!possibleId(assetId)) throw missingAsset()
    if (!possibleId(transactionId)) throw missingTransaction()
    await this.events.during(async eventsOf => await this.store.write(async work => {
      const locked = ifReached(scope, await work.assets.lockForRemoval(assetId, transactionId), asset => asset.userId)
      if (locked === undefined) throw missingAsset()
      const events = eventsOf(locked.value.symbol, dayOf(work.now))
      const recorded = await reconciledTrades(work, locked)
      const kept = recorded.filter(trade => trade.id !== transactionId)
      if (kept.length === recorded.length) throw missingTransaction()
      const held = positionWithEvents(recorded, kept, events)
      await work.trades.delete(transactionId)
      await work.assets.setPosition(assetId, positionColumns(held.position, held.events))
      await work.portfolios.touch(locked.value.portfolioId)
    }))
  }

  /**
   * The transactions of several assets, each's in the order they count, in one read (GraphQL's
   * loader); an asset out of the caller's scope has none, as an unknown one.
   */
  async ofAssets (access: Access, assetIds: readonly string[]): Promise<Map<string, AssetTransaction[]>> {
    const scope = await access.portfolioScope()
    return await this.store.transactions.ofAssets(await reached(scope, assetIds, this.store.assets))
  }
}
